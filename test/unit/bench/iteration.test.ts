/**
 * `bench iteration` end to end on a tiny random-init model (STARPO_BENCH_SET swaps SmolLM2 for it and shrinks the
 * batch): one line per case, the second iteration's wall-clock with the collapse probe's share against the case's
 * target, its stage split and each stage's floor (its model FLOPs at the MatMul peak), the load.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { benchIteration } from '../../../src/bench/iteration.ts';
import { writeTinyModel } from '../rl/tiny-hf-model.ts';

const scratch = mkdtempSync(join(tmpdir(), 'starpo-bench-iteration-test-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

test('bench iteration: a line per case with the second iteration against its target and the stage split', async () => {
  const model = await writeTinyModel(join(scratch, 'qwen3'), 'qwen3');
  process.env.STARPO_BENCH_SET = `model=${model},envGroups=2,groupSize=2,maxResponseTokens=4,threads=1,miniBatchSize=2`;
  const lines: Record<string, unknown>[] = [];
  try {
    await benchIteration({ cases: 'bandit-lora', peakGflops: 1 }, (l) => lines.push(JSON.parse(l)));
  } finally {
    delete process.env.STARPO_BENCH_SET;
  }
  assert.deepEqual(
    lines.map((l) => [l.bench, l.case, l.batch, l.targetSeconds]),
    [['iteration', 'bandit-lora', '2x2', 30]],
  );
  for (const l of lines) {
    const stages = l.stagesSeconds as Record<string, number>;
    assert.ok((l.seconds as number) > 0, JSON.stringify(l));
    // the collapse probe (iteration 1 and every 5th by default) counts by its share of an iteration
    const probe = (l.firstIterationStagesSeconds as Record<string, number>).collapse;
    assert.ok(probe >= 0 && Math.abs((l.collapseSecondsPerIteration as number) - probe / 5) <= 0.1, JSON.stringify(l));
    const withCollapse = l.secondsWithCollapse as number;
    assert.ok(Math.abs(withCollapse - (l.seconds as number) - (l.collapseSecondsPerIteration as number)) <= 0.1);
    assert.equal(l.reached, withCollapse <= (l.targetSeconds as number)); // a speed figure, not a test
    assert.ok('rollout' in stages && 'update' in stages, JSON.stringify(stages));
    assert.equal((l.load as number[]).length, 2);
    assert.ok((l.tokensGenerated as number) > 0);
    // the floors: each stage's model FLOPs at the given peak (1 GFLOP/s: the seconds are the GFLOP)
    const [gflop, floor] = [l.gflop, l.floorSeconds] as Record<string, number>[];
    assert.deepEqual(Object.keys(gflop), ['rollout', 'score', 'update']);
    assert.ok(gflop.rollout > 0 && gflop.update > 0, JSON.stringify(gflop));
    assert.ok(Math.abs(floor.rollout - gflop.rollout) <= 0.05, JSON.stringify([floor, gflop]));
  }
});

test('bench iteration: an unknown case is refused before any run starts', async () => {
  await assert.rejects(
    benchIteration({ cases: 'bandit-lora,chess' }),
    /unknown iteration cases chess; known: bandit-lora/,
  );
});
