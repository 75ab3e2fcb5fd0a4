import { test } from 'node:test';
import assert from 'node:assert/strict';
import { collapseProbe, type Scorer } from '../../../src/rl/collapse-probe.ts';
import { resolveConfig } from '../../../src/rl/config.ts';
import type { Trajectory } from '../../../src/rl/rollout.ts';
import type { SequenceBatch } from '../../../src/policy/programs/batch.ts';

// Roles: 1 system, 2 user, 4 assistant. Groups 0 and 2 saw the same prompt tokens; group 1 another one.
const traj = (group: number, prompt: number[], response: number[]): Trajectory => ({
  group,
  index: 0,
  env: 'bandit',
  seed: group,
  ids: [...prompt, ...response, 9],
  mask: [],
  logprobs: [],
  turns: [],
  roles: [...prompt.map((_, i) => (i === 0 ? 1 : 2)), ...response.map(() => 4), 2],
  promptTokens: prompt.length,
  return: 0,
  success: false,
  truncated: false,
});
const BATCH = [traj(2, [1, 5], [7, 7]), traj(1, [1, 6], [8]), traj(0, [1, 5], [7]), traj(1, [1, 6], [])];

/** A scripted scorer (not a model): log p(token) = −token/10 after a prompt ending in 5, else −1. */
const scripted = (seen: SequenceBatch[]): Scorer => ({
  async score(batch) {
    seen.push(batch);
    const logprobs = new Float32Array(batch.batch * batch.seqLen);
    for (let b = 0; b < batch.batch; b++) {
      const prompt5 = batch.tokens[b * batch.seqLen + 1] === 5;
      for (let t = 1; t < batch.seqLen; t++)
        logprobs[b * batch.seqLen + t] = prompt5 ? -batch.tokens[b * batch.seqLen + t] / 10 : -1;
    }
    return { logprobs };
  },
});

test('the probe pairs every non-empty first response with every distinct prompt and sums over the response only', async () => {
  const seen: SequenceBatch[] = [];
  const c = resolveConfig({ preset: 'grpo', overrides: ['env=bandit', 'collapseSamples=0'] });
  const probe = await collapseProbe(c, 1, BATCH, scripted(seen), 0);
  assert.deepEqual([probe!.rows, probe!.columns, probe!.firstTurnTotal, probe!.firstTurnValid], [3, 3, 4, 3]);
  assert.deepEqual(
    [probe!.columnOfRow, probe!.columnSignature],
    [
      [2, 1, 0],
      [0, 1, 0],
    ],
  );
  // Row 0 (z = 7 7) after prompts of groups 0, 1, 2: −1.4, −2, −1.4; means over its 2 tokens.
  assert.deepEqual(
    probe!.sumLogProb.slice(0, 3).map((x) => Number(x.toFixed(5))),
    [-1.4, -2, -1.4],
  );
  assert.deepEqual(
    probe!.meanLogProb.slice(0, 3).map((x) => Number(x.toFixed(5))),
    [-0.7, -1, -0.7],
  );
  assert.deepEqual([seen[0].batch, seen[0].seqLen], [9, 4]);
});

test('the probe samples collapseSamples pairs from a seeded stream and runs at iteration 1 and every n-th', async () => {
  const c = resolveConfig({ preset: 'grpo', overrides: ['env=bandit', 'collapseSamples=2', 'collapseEvery=5'] });
  const a = await collapseProbe(c, 5, BATCH, scripted([]), 42);
  assert.deepEqual(a, await collapseProbe(c, 5, BATCH, scripted([]), 42));
  assert.equal(a!.rows, 2);
  assert.equal(await collapseProbe(c, 3, BATCH, scripted([]), 42), null);
  assert.notEqual(await collapseProbe(c, 1, BATCH, scripted([]), 42), null);
});
