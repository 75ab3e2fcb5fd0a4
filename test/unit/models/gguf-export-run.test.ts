/**
 * `starpo export <run> --gguf`: a LoRA run's checkpoint (configs/qwen2.5-0.5b-sokoban.json shrunk, on a tiny
 * Qwen3 with the real tokenizer, as lora-run.test.ts trains it) exported as GGUF continues a chat prompt in
 * llama.cpp greedily exactly as starpo's own policy does, with the adapters merged; and the CLI's flags.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { Command } from 'commander';
import { registerExport } from '../../../src/cli/commands/export.ts';
import { ConfigError } from '../../../src/errors.ts';
import { exportGguf } from '../../../src/run/export-gguf.ts';
import { exportModelGguf } from '../../../src/models/gguf/export.ts';
import { Policy } from '../../../src/policy/engine/policy.ts';
import { importState } from '../../../src/policy/engine/state.ts';
import { openModelDirectory } from '../../../src/policy/io/model-dir.ts';
import { loadTokenizer } from '../../../src/policy/tokenizer/load.ts';
import { trainEmbedded } from '../../../src/embedded/driver.ts';
import { exportCheckpoint } from '../../../src/run/export.ts';
import { paperConfig, writeTinyModel } from '../rl/tiny-hf-model.ts';
import { argmax, llamaLogprobs, llamaSequence, loadGguf } from './gguf-helpers.ts';

const scratch = mkdtempSync(join(tmpdir(), 'starpo-gguf-run-'));
after(() => rmSync(scratch, { recursive: true, force: true }));
const base = await writeTinyModel(join(scratch, 'qwen3'), 'qwen3', { dtype: 'BF16' });
// A large rate so that one iteration moves the adapters measurably away from B = 0.
// The compact prompt: the export does not depend on the words, and RAGEN's full one triples every sequence.
const config = paperConfig(base, [
  'iterations=1',
  'template=compact',
  'loraRank=4',
  'loraAlpha=8',
  'lrActor=3e-3',
  'lrCritic=3e-3',
]);
const runs = join(scratch, 'runs');
const training = trainEmbedded({ root: runs, runId: 'r', config });
const run = join(runs, 'r');
const PROMPT = '<|im_start|>user\nPush the box onto the target.<|im_end|>\n<|im_start|>assistant\n';
const N = 8;
const VOCAB = 151936;

/** llama.cpp's greedy continuation of `prompt` and each token's log-prob. */
async function llamaGreedy(gguf: string, prompt: number[]): Promise<{ tokens: number[]; logprobs: number[] }> {
  const model = await loadGguf(gguf);
  const seq = await llamaSequence(model, VOCAB);
  const tokens: number[] = [];
  const logprobs: number[] = [];
  try {
    let lp = (await seq.feed(prompt, prompt.length - 1))[0]!;
    for (let i = 0; i < N; i++) {
      tokens.push(argmax(lp));
      logprobs.push(lp[tokens.at(-1)!]!);
      if (i < N - 1) lp = (await seq.feed([tokens.at(-1)!]))[0]!;
    }
  } finally {
    await seq.dispose();
    await model.dispose();
  }
  return { tokens, logprobs };
}

test("a LoRA run's checkpoint as GGUF continues greedily in llama.cpp as starpo's policy does", async (t) => {
  await training;
  const out = join(scratch, 'r.gguf');
  const r = await exportGguf({ checkpoint: run, out });
  assert.deepEqual([r.merged, r.checkpoint.iteration, r.arch, Object.keys(r.storedTypes)], [true, 1, 'qwen3', ['F32']]);
  assert.deepEqual(
    readdirSync(scratch).filter((f) => f.includes('.hf-')),
    [],
    'the temporary HF directory is removed',
  );

  const hf = join(scratch, 'hf');
  await exportCheckpoint({ checkpoint: run, out: hf });
  const dir = await openModelDirectory(hf);
  const prompt = loadTokenizer(dir.assets).encode(PROMPT);
  const policy = new Policy({ config: dir.config, threads: 1 });
  importState(policy, { weights: await dir.readWeights(), optimizer: null, step: 0 });
  const [starpo] = await policy.generate({ prompts: [prompt], maxNewTokens: N, stopTokenIds: [] });
  await policy.close();

  const model = await loadGguf(out, true);
  assert.deepEqual(model.tokenize(PROMPT, true), prompt);
  await model.dispose();
  const llama = await llamaGreedy(out, prompt);
  assert.deepEqual(llama.tokens, starpo!.tokens);
  const diff = Math.max(...llama.logprobs.map((lp, i) => Math.abs(lp - starpo!.logprobs[i]!)));
  t.diagnostic(`greedy ${llama.tokens.join(' ')}; max |Δ log p| llama.cpp vs starpo ${diff.toExponential(2)}`);
  assert.ok(diff < 1e-4, `${diff}`);

  // The same tokens under the base model score measurably differently: the GGUF holds the merged adapters.
  const baseGguf = join(scratch, 'base.gguf');
  await exportModelGguf(base, baseGguf);
  const scored = await loadGguf(baseGguf);
  const lps = await llamaLogprobs(scored, [...prompt, ...llama.tokens], VOCAB, prompt.length - 1);
  await scored.dispose();
  const moved = Math.max(...llama.tokens.map((tok, i) => Math.abs(lps[i]![tok]! - llama.logprobs[i]!)));
  assert.ok(moved > 1e-3, `the base model scores the continuation within ${moved} of the run's`);
});

/** Runs `starpo export …args` in-process; resolves to what it printed. */
async function cli(t: { mock: { method: typeof test.mock.method } }, args: string[]): Promise<string> {
  const program = new Command().exitOverride();
  registerExport(program);
  const log = t.mock.method(console, 'log', () => undefined);
  try {
    await program.parseAsync(['export', ...args], { from: 'user' });
    return log.mock.calls.map((c) => String(c.arguments[0])).join('\n');
  } finally {
    log.mock.restore();
  }
}

test('starpo export --gguf writes Q8_0 and says what it wrote; its flags are checked in one line each', async (t) => {
  await training;
  const q8 = join(scratch, 'cli', 'r-q8.gguf');
  const said = await cli(t, [run, '--gguf', q8, '--dtype', 'q8_0']);
  assert.match(
    said,
    /^exported r main@1 \(LoRA merged\) to .*r-q8\.gguf: qwen3 GGUF, [\d.]+ MiB, tensors 15 Q8_0, 9 F32$/,
  );
  const refused = async (args: string[], message: RegExp) =>
    assert.rejects(cli(t, args), (err: unknown) => err instanceof ConfigError && message.test(err.message));
  await refused([run], /exactly one of --out <dir> \(Hugging Face directory\) or --gguf <file>/);
  await refused([run, '--out', join(scratch, 'o'), '--gguf', join(scratch, 'o.gguf')], /exactly one of/);
  await refused([run, '--gguf', join(scratch, 'b.gguf'), '--dtype', 'bf16'], /must be f32, f16 or q8_0 for --gguf/);
  await refused([run, '--out', join(scratch, 'b'), '--dtype', 'q8_0'], /--dtype: must be f32 or bf16, got "q8_0"/);
  await refused([run, '--gguf', join(scratch, 'p.gguf'), '--peft'], /--peft: .*use it with --out/);
  writeFileSync(join(scratch, 'taken.gguf'), 'x');
  await refused([run, '--gguf', join(scratch, 'taken.gguf')], /--gguf: .*taken\.gguf exists/);
  await assert.rejects(
    exportGguf({ checkpoint: 'nope', runsDir: runs, out: join(scratch, 'never', 'x.gguf') }),
    /run nope not found/,
  );
  assert.equal(existsSync(join(scratch, 'never')), false, 'nothing is created for a missing run');
});
