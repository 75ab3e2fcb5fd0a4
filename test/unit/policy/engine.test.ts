import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EngineError, PolicyEngine } from '../../../src/policy/engine/engine.ts';
import { Policy } from '../../../src/policy/engine/policy.ts';
import { exportState, importState } from '../../../src/policy/engine/state.ts';
import { parseModelConfig } from '../../../src/policy/io/config.ts';
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
  await assert.rejects(
    engine.trainStep(batch, { loss: { kind: 'value', clip: 0.5, aggregation: 'token-mean' }, lr: 1 }),
    (e: unknown) => {
      return e instanceof EngineError && e.remoteName === 'ConfigError' && /does not fit a actor/.test(e.message);
    },
  );
  await engine.close();
  await assert.rejects(
    PolicyEngine.start({ config, provider: 'cuda' }),
    (e: unknown) => e instanceof EngineError && /execution provider "cuda" is unavailable/.test(e.message),
  );
});
