import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeFailure } from '../../../src/cli/failure.ts';
import { test } from 'node:test';
import { EngineError, PolicyEngine } from '../../../src/policy/engine/engine.ts';
import { Policy } from '../../../src/policy/engine/policy.ts';
import { exportState, importState } from '../../../src/policy/engine/state.ts';
import { loadCheckpoint } from '../../../src/policy/io/checkpoint.ts';
import { parseModelConfig } from '../../../src/policy/io/config.ts';
import { sha256File } from '../../../src/storage/hash.ts';
import { STARPO_S_PPO } from '../../../src/policy/programs/loss.ts';
import { createCharTokenizer } from '../../../src/policy/tokenizer/char.ts';

const tokenizer = createCharTokenizer({ characters: 'abcdefgh' });
const config = parseModelConfig({
  model_type: 'qwen2',
  vocab_size: tokenizer.vocabSize,
  hidden_size: 16,
  intermediate_size: 32,
  num_hidden_layers: 1,
  num_attention_heads: 2,
  num_key_value_heads: 1,
  initializer_range: 0.3,
  eos_token_id: tokenizer.eosId,
});
const batch = {
  batch: 1,
  seqLen: 4,
  tokens: Int32Array.of(3, 4, 5, 6),
  attentionMask: new Float32Array(4).fill(1),
  lossMask: Float32Array.of(0, 1, 1, 1),
};

test('the worker engine generates, trains and round-trips state like the in-process policy', async () => {
  const engine = await PolicyEngine.start({ config, seed: 5, threads: 1, tokenizerFiles: tokenizer.toFiles() });
  const local = new Policy({ config, seed: 5, threads: 1 });
  const req = { prompts: [[3, 4], [5]], maxNewTokens: 5, sampling: { temperature: 1 }, seed: 2 };
  assert.deepEqual(await engine.generate(req), await local.generate(req));
  const sft = { loss: { kind: 'sft', aggregation: 'token-mean' }, lr: 0.01 } as const;
  assert.deepEqual(await engine.trainStep(batch, sft), await local.trainStep(batch, sft));
  const state = await engine.getState();
  assert.equal(state.step, 1);
  assert.deepEqual(
    state.weights.get('model.norm.weight')!.data,
    exportState(local).weights.get('model.norm.weight')!.data,
  );
  assert.deepEqual(await engine.info(), {
    role: 'actor',
    paramCount: 2736,
    step: 1,
    threads: 1,
    provider: 'cpu',
    programs: 3,
  });
  await engine.releasePrograms(); // frees them; the next call compiles what it needs again, same results
  assert.equal((await engine.info()).programs, 0);
  assert.deepEqual(await engine.generate(req), await local.generate(req));
  await engine.close();
  await local.close();
});

test('a streamed generate hands each row its tokens as they are made, across the worker, the same tokens', async () => {
  const engine = await PolicyEngine.start({ config, seed: 5, threads: 1, tokenizerFiles: tokenizer.toFiles() });
  const req = { prompts: [[3, 4], [5], [6, 7, 1]], maxNewTokens: 6, sampling: { temperature: 1 }, rowSeeds: [1, 2, 3] };
  const streamed: number[][] = [[], [], []];
  const order: number[] = [];
  const gens = await engine.generate({
    ...req,
    onToken: (row, token) => (streamed[row]!.push(token), order.push(row)),
  });
  assert.deepEqual(
    streamed,
    gens.map((g) => g.tokens),
  );
  assert.deepEqual(await engine.generate(req), gens, 'streaming changes nothing sampled');
  assert.deepEqual(order.slice(0, 3), [0, 1, 2], 'one token per row per step, as the steps run');
  await engine.close();
});

test('a model saves its checkpoint between the calls before and after it, in process and from the worker', async () => {
  const sft = { loss: { kind: 'sft', aggregation: 'token-mean' } as const, lr: 0.01 };
  const expected = new Policy({ config, seed: 5, threads: 1 });
  const models = [
    new Policy({ config, seed: 5, threads: 1 }),
    await PolicyEngine.start({ config, seed: 5, threads: 1 }),
  ];
  const extras = { config, rng: {}, tokenizerFiles: tokenizer.toFiles() };
  const dir = await mkdtemp(join(tmpdir(), 'starpo-save-'));
  try {
    await expected.trainStep(batch, sft);
    for (const [i, model] of models.entries()) {
      const out = join(dir, String(i));
      const stepped = model.trainStep(batch, sft);
      const saved = model.saveCheckpoint(out, extras); // after the first step, before the second
      const again = model.trainStep(batch, sft);
      await Promise.all([stepped, again]);
      const digests = await saved;
      const loaded = await loadCheckpoint(out, digests);
      assert.deepEqual(
        { ...loaded, config: undefined },
        { ...extras, config: undefined, ...exportState(expected), metadata: {} },
      );
      for (const [name, sha] of digests) assert.equal(sha, await sha256File(join(out, name)), name);
      await model.saveCheckpoint(join(dir, `${i}-weights`), extras, false);
      assert.equal((await loadCheckpoint(join(dir, `${i}-weights`))).optimizer, null);
    }
  } finally {
    await Promise.all([expected, ...models].map((m) => m.close()));
    await rm(dir, { recursive: true, force: true });
  }
});

test('state import restores weights, moments and step exactly', async () => {
  const a = new Policy({ config, seed: 1, threads: 1 });
  await a.trainStep(
    { ...batch, advantages: new Float32Array(4).fill(1), oldLogprobs: new Float32Array(4).fill(-2) },
    { loss: STARPO_S_PPO, lr: 0.01 },
  );
  const b = new Policy({ config, seed: 2, threads: 1 });
  assert.deepEqual(importState(b, exportState(a)), { unused: [] });
  assert.deepEqual(exportState(b), exportState(a));
  assert.deepEqual(await b.score(batch), await a.score(batch));
  await Promise.all([a.close(), b.close()]);
});

test('worker errors arrive as EngineError naming the worker-side class; a missing provider fails at start', async () => {
  const engine = await PolicyEngine.start({ config, seed: 5, threads: 1 });
  const dir = await mkdtemp(join(tmpdir(), 'starpo-engine-'));
  try {
    await assert.rejects(
      engine.trainStep(batch, { loss: { kind: 'value', clip: 0.5, aggregation: 'token-mean' }, lr: 1 }),
      (e: unknown) =>
        e instanceof EngineError && e.remoteName === 'ConfigError' && /does not fit a actor/.test(e.message),
    );
    // A system error in the worker (a checkpoint directory under a file) keeps its code, call and path.
    await writeFile(join(dir, 'file'), '');
    const target = join(dir, 'file', 'ckpt');
    const err = await engine.saveCheckpoint(target, { config, rng: {}, tokenizerFiles: {} }).catch((e: unknown) => e);
    assert.ok(err instanceof EngineError);
    assert.equal(err.retryable, true, 'retried, as the same error raised in this thread would be');
    const line = `cannot create the directory ${target} — a part of the path is not a directory (ENOTDIR)`;
    assert.equal(describeFailure(err).line, line);
  } finally {
    await engine.close();
    await rm(dir, { recursive: true, force: true });
  }
  await assert.rejects(
    PolicyEngine.start({ config, provider: 'cuda' }),
    (e: unknown) => e instanceof EngineError && /execution provider "cuda" is unavailable/.test(e.message),
  );
});
