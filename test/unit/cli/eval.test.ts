import { test } from 'node:test';
import { envSpecId, resolveEnvConfig } from '../../../src/envs/index.ts';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { evalCommand } from '../../../src/cli/commands/eval.ts';
import { evalConfig } from '../../../src/replay/evaluate.ts';
import { resolveConfig } from '../../../src/rl/config.ts';
import { parseCheckpointRef } from '../../../src/run/checkpoint-ref.ts';
import { tinyRun } from '../replay/tiny-run.ts';

test('a checkpoint reference is a run directory or id with an optional @iteration', () => {
  assert.deepEqual(parseCheckpointRef('runs/demo@12'), { root: 'runs', runId: 'demo', iteration: 12 });
  assert.deepEqual(parseCheckpointRef('demo', '/tmp/runs'), { root: '/tmp/runs', runId: 'demo' });
  assert.throws(() => parseCheckpointRef('runs/demo@x'), /the part after @ must be an iteration number/);
});

test("eval reports a checkpoint's success and pass@k beside the oracle", { timeout: 120_000 }, async () => {
  const root = await tinyRun('grpo');
  const lines: string[] = [];
  const run = join(root, 'r');
  const flags = { checkpoint: `${run}@2`, runsDir: 'runs', env: 'bandit-reversed', seeds: '4', samples: '2' };
  const r = await evalCommand({ ...flags, json: true }, (l) => lines.push(l));
  assert.deepEqual(r.checkpoint, { runId: 'r', lineageId: 'main', iteration: 2 });
  assert.deepEqual([r.env, r.seeds, r.samples, r.oracleSuccess], ['bandit-reversed', 4, 2, 1]);
  assert.equal(r.envSpecId, envSpecId(resolveEnvConfig('bandit-reversed'))); // the run's budget is the preset's
  assert.deepEqual(Object.keys(r.passAtK), ['pass@1', 'pass@2']);
  assert.ok(r.passAtK['pass@2'] >= r.passAtK['pass@1']);
  assert.equal(JSON.parse(lines[0]).type, 'eval');
  // One turn per bandit episode: 4 seeds × 2 samples; each rate a share of those turns.
  assert.equal(r.format.turns, 8);
  for (const k of ['parsed', 'cut', 'echo'] as const) assert.ok(r.format[k] >= 0 && r.format[k] <= 1, k);
  // The token limit is the evaluation's to choose (a warm start and its RL run compared under one limit).
  const c = resolveConfig({ overrides: ['env=bandit', 'valSeeds=8'] });
  assert.equal(evalConfig(c, { maxResponseTokens: 64 }).maxResponseTokens, 64);
  assert.equal(evalConfig(c, {}).maxResponseTokens, c.maxResponseTokens);
  await assert.rejects(evalCommand({ ...flags, maxResponseTokens: '0' }), /--max-response-tokens/);
  const table: string[] = [];
  await evalCommand(flags, (l) => table.push(l));
  assert.match(table[0]!, /parsed.*cut.*echo/s);
  const newest = await evalCommand({ checkpoint: 'r', runsDir: root, seeds: '2', json: true }, () => {});
  assert.deepEqual([newest.checkpoint.iteration, newest.env, newest.samples], [3, 'bandit', 1]);
  await assert.rejects(
    evalCommand({ ...flags, checkpoint: `${run}@9` }),
    /no checkpoint main@9; available: main@0, main@1, main@2, main@3/, // 0 holds the reference model (klCoef > 0)
  );
});

test(
  'a checkpoint whose run trained on a GPU is evaluated on the CPU, on any machine',
  { timeout: 120_000 },
  async () => {
    const root = await tinyRun('grpo');
    const file = join(root, 'r', 'config.json');
    const config = JSON.parse(readFileSync(file, 'utf8'));
    writeFileSync(file, JSON.stringify({ ...config, rolloutProvider: 'cuda', updateProvider: 'cuda' }));
    const r = await evalCommand({ checkpoint: join(root, 'r'), runsDir: 'runs', seeds: '2', json: true }, () => {});
    assert.deepEqual([r.checkpoint.iteration, r.seeds], [3, 2]);
  },
);
