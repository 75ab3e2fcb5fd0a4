/**
 * The real SmolLM2-135M-Instruct, as `starpo models get smollm2-135m-instruct` imports it from the pinned PyPI
 * wheel (downloaded once into the cache; .ci/run fetches it before the tests), against fixtures made by
 * transformers' GGUF loader and the gguf package from the same file (scripts/gguf_reference.py smollm2).
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { chatTemplateFrom } from '../../../src/agent/chat-template.ts';
import { dequantize } from '../../../src/models/gguf/dequant.ts';
import { GgufFile } from '../../../src/models/gguf/reader.ts';
import { getNamedModel, namedModelPaths } from '../../../src/models/named.ts';
import { weightFeeds } from '../../../src/policy/engine/feeds.ts';
import { createSession, floatTensor, int64Tensor } from '../../../src/policy/engine/session.ts';
import { Graph } from '../../../src/policy/graph/graph.ts';
import { openModelDirectory } from '../../../src/policy/io/model-dir.ts';
import { sha256File } from '../../../src/storage/hash.ts';
import { buildLayout } from '../../../src/policy/model/layout.ts';
import { fromNamed } from '../../../src/policy/model/params.ts';
import { lmLogits, weightInputs } from '../../../src/policy/model/transformer.ts';
import { encode, sequenceInputs } from '../../../src/policy/programs/common.ts';
import { asObject } from '../../../src/policy/tokenizer/hf.ts';
import { loadTokenizer } from '../../../src/policy/tokenizer/load.ts';

interface Fixture {
  gguf_sha256: string;
  tensors: Record<string, { type: string; shape: number[]; sha256: string }>;
  corpus: { text: string; transformers_ids: number[]; ids: number[]; decoded: string }[];
  chat: { messages: { role: string; content: string }[]; text: string; ids: number[] };
  logits: { ids: number[]; argmax: number[]; last: string }[];
}
const FIXTURE = JSON.parse(
  readFileSync(new URL('../../fixtures/gguf/smollm2.json', import.meta.url), 'utf8'),
) as Fixture;

const dir = await getNamedModel('smollm2-135m-instruct');
const model = await openModelDirectory(dir);
const tokenizer = loadTokenizer(model.assets);

test('the packaged GGUF is the one the fixtures were made from', async () => {
  assert.equal(await sha256File(namedModelPaths('smollm2-135m-instruct').gguf), FIXTURE.gguf_sha256);
});

test('real Q8_0, Q4_1 and F32 tensors dequantise bit for bit as the gguf package does', async () => {
  const file = await GgufFile.open(namedModelPaths('smollm2-135m-instruct').gguf);
  try {
    for (const [name, want] of Object.entries(FIXTURE.tensors)) {
      const t = file.tensor(name)!;
      assert.equal(t.type, want.type);
      const values = dequantize(
        t.type,
        await file.raw(t),
        want.shape.reduce((a, b) => a * b, 1),
      );
      assert.equal(createHash('sha256').update(values).digest('hex'), want.sha256, name);
    }
  } finally {
    await file.close();
  }
});

test('the imported tokenizer gives the ids of the GGUF-named pre-tokenizer on a multilingual corpus', () => {
  for (const line of FIXTURE.corpus) {
    assert.deepEqual(tokenizer.encode(line.text), line.ids, JSON.stringify(line.text));
    assert.equal(tokenizer.decode(line.ids), line.text);
  }
});

test("where no digits are split differently, the ids equal transformers' GGUF tokenizer's", () => {
  const differing = FIXTURE.corpus.filter((l) => JSON.stringify(l.ids) !== JSON.stringify(l.transformers_ids));
  // transformers 5.25 has no `smollm` entry and splits with GPT-2's regex: only " 1"-style digit runs differ.
  assert.deepEqual(
    differing.map((l) => l.text),
    ['3.14159265358979 1,000,000 0x1F 1e-5 -42 +7 ½ ² ٣ ४२'],
  );
});

test("the chat template from the GGUF renders transformers' text and ids", () => {
  const config = asObject(model.assets['tokenizer_config.json']!, 'tokenizer_config.json');
  const template = chatTemplateFrom(config, undefined)!;
  const text = template.render(FIXTURE.chat.messages as never, { addGenerationPrompt: true });
  assert.equal(text, FIXTURE.chat.text);
  assert.deepEqual(tokenizer.encode(text), FIXTURE.chat.ids);
});

test("logits equal transformers' (same GGUF, float32) on fixed prompts", { timeout: 300_000 }, async (t) => {
  const layout = buildLayout(model.config);
  const packed = fromNamed(layout, Object.fromEntries(await model.readWeights())).packed;
  const V = model.config.vocabSize;
  let worst = 0;
  for (const c of FIXTURE.logits) {
    const T = c.ids.length;
    const g = new Graph('float32');
    const m = weightInputs(g, layout);
    g.output('logits', lmLogits(m, encode(m, sequenceInputs(g, 1, T))));
    const session = await createSession(g, { threads: 2 });
    const out = await session.run({
      ...weightFeeds(layout, packed),
      tokens: int64Tensor(c.ids, [1, T]),
      positions: int64Tensor(
        Array.from({ length: T }, (_, t) => t),
        [1, T],
      ),
      attention_mask: floatTensor(new Float32Array(T).fill(1), [1, T]),
    });
    await session.release();
    const logits = out.logits.data as Float32Array;
    const argmax = Array.from({ length: T }, (_, t) => {
      let best = 0;
      for (let v = 1; v < V; v++) if (logits[t * V + v]! > logits[t * V + best]!) best = v;
      return best;
    });
    assert.deepEqual(argmax, c.argmax);
    const want = new Float32Array(Buffer.from(c.last, 'base64').buffer.slice(0));
    for (let v = 0; v < V; v++) worst = Math.max(worst, Math.abs(logits[(T - 1) * V + v]! - want[v]!));
  }
  t.diagnostic(`max |Δ logit| at the last position: ${worst}`);
  // Measured 5.1e-5: float32 sums in another order than PyTorch's.
  assert.ok(worst < 1e-4, `max |Δ logit| at the last position = ${worst}`);
});

test('a directory as transformers 5.25 writes it from this GGUF is accepted, with the same numerics', async () => {
  const fx = JSON.parse(readFileSync(new URL('../../fixtures/gguf/smollm2.json', import.meta.url), 'utf8')) as {
    transformers_config: Record<string, unknown>;
    transformers_tokenizer_config: Record<string, unknown>;
  };
  const tmp = await mkdtemp(join(tmpdir(), 'starpo-tf-dir-'));
  try {
    await symlink(join(dir, 'model.safetensors'), join(tmp, 'model.safetensors'));
    await writeFile(join(tmp, 'config.json'), JSON.stringify(fx.transformers_config));
    await writeFile(join(tmp, 'tokenizer.json'), model.assets['tokenizer.json']!);
    await writeFile(join(tmp, 'tokenizer_config.json'), JSON.stringify(fx.transformers_tokenizer_config));
    const theirs = await openModelDirectory(tmp);
    assert.deepEqual({ ...theirs.config }, { ...model.config });
    assert.equal(loadTokenizer(theirs.assets).eosId, tokenizer.eosId);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
});
