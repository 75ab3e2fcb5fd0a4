/**
 * A run whose rollouts decode with int8 weights (rolloutWeights int8): the trainer recomputes float32 log-probs, the
 * gap shows in logprobs/behaviour_gap_*, TIS weights the update by it, and a run stopped and resumed ends bitwise
 * equal to an uninterrupted one (the weights are quantized again from the checkpoint's, the same numbers).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { trainEmbedded } from '../../../src/embedded/driver.ts';
import { type IterationEvent, replay } from '../../../src/events/index.ts';
import { resolveConfig } from '../../../src/rl/config.ts';
import { localRunEvents } from '../../../src/run/location.ts';
import { TINY_SOKOBAN_RESUME } from './tiny-sokoban-config.ts';

const scratch = mkdtempSync(join(tmpdir(), 'starpo-int8-rollouts-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

async function iterationMetrics(root: string): Promise<Record<string, number>[]> {
  const reader = localRunEvents(root);
  const out: Record<string, number>[] = [];
  for await (const e of replay(reader, 'r')) if (e.kind === 'iteration') out.push((e as IterationEvent).metrics);
  await reader.close();
  return out;
}

const weights = (root: string) =>
  readFileSync(join(root, 'r', 'checkpoints', 'main', '00000004', 'actor.model.safetensors'));

test('int8 rollouts: the behaviour gap is measured, TIS corrects it, and a resumed run ends bitwise equal', async () => {
  const config = (rolloutWeights: string) =>
    resolveConfig({
      preset: 'starpo-s',
      overrides: [...TINY_SOKOBAN_RESUME, `rolloutWeights=${rolloutWeights}`, 'offPolicyCorrection=tis'],
    });
  const [straight, crashed, float] = ['straight', 'crashed', 'float'].map((d) => mkdtempSync(join(scratch, d)));
  await trainEmbedded({ root: straight, runId: 'r', config: config('int8') });
  await trainEmbedded({ root: crashed, runId: 'r', config: config('int8'), stopAfter: 2 });
  await trainEmbedded({ root: crashed, runId: 'r', resume: true });
  await trainEmbedded({ root: float, runId: 'r', config: config('float32') });
  assert.ok(weights(crashed).equals(weights(straight)), 'the resumed int8 run differs from the straight one');
  const [int8Metrics, floatMetrics] = [await iterationMetrics(straight), await iterationMetrics(float)];
  for (const m of int8Metrics) {
    assert.ok(m['logprobs/behaviour_gap_mean'] > 1e-4, `int8 gap ${m['logprobs/behaviour_gap_mean']}`);
    assert.ok(m['tis/ratio_max'] !== 1, 'TIS saw no ratio away from 1');
  }
  for (const m of floatMetrics) assert.ok(m['logprobs/behaviour_gap_mean'] < 1e-4);
});
