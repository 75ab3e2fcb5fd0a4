import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLocalEventReader } from '../../../src/events/index.ts';
import { replayRun } from '../../../src/replay/run.ts';
import { tinyRun } from './tiny-run.ts';

async function replayed(root: string) {
  const reader = createLocalEventReader({ root });
  try {
    return await replayRun({ reader, runId: 'r' });
  } finally {
    await reader.close();
  }
}

const SLOW = { timeout: 120_000 };

test('every trajectory metric of a GRPO run with a top-std filter is recomputed exactly', SLOW, async () => {
  const out = await replayed(
    await tinyRun('grpo', ['filter=top-std', 'filterFraction=0.5', 'miniBatchSize=8', 'collapseEvery=1']),
  );
  assert.deepEqual(
    out.iterations.map((c) => [c.iteration, c.ok, c.trainTrajectories, c.valTrajectories]),
    [
      [1, true, 16, 0],
      [2, true, 16, 8],
      [3, true, 16, 8],
    ],
  );
  // 29 / 47 trajectory metrics plus the 28 collapse metrics, recomputed from the probe each event carries.
  assert.deepEqual(
    out.iterations.map((c) => c.checked),
    [57, 75, 75],
  );
  // The update's own metrics are not recomputable; this tiny run's kept groups carry no advantage, so its
  // update is the skipped actor step (actor/no_signal) rather than a gradient.
  assert.ok(out.iterations[0].notRecomputable.includes('actor/no_signal'));
  assert.ok(!out.iterations[0].notRecomputable.includes('collapse/mi_estimate'));
  assert.ok(!out.iterations[0].notRecomputable.includes('in_group_std/kept'));
  assert.deepEqual([out.trajectories, out.problems.length, out.unfinished.length], [64, 0, 0]);
});

test('a DAPO run replays its dynamic-sampling rounds and the metrics they produced', SLOW, async () => {
  // A short random-format warm-start makes some groups informative, so DAPO needs 2-3 rounds per iteration.
  const warm = ['sftSteps=40', 'sftLr=3e-3', 'sftPolicy=random', 'sftEpisodes=32'];
  const out = await replayed(await tinyRun('dapo', ['dynamicSamplingMaxTries=3', 'iterations=2', ...warm]));
  assert.deepEqual(
    out.iterations.map((c) => [c.iteration, c.ok, c.mismatches]),
    [
      [1, true, []],
      [2, true, []],
    ],
  );
});
