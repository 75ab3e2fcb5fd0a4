import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canonicalConfigJSON, resolveConfig } from '../../../src/rl/config.ts';
import { trainEmbedded } from '../../../src/embedded/driver.ts';
import { TINY_SOKOBAN_RESUME } from './tiny-sokoban-config.ts';
import { replay, type IterationEvent } from '../../../src/events/index.ts';
import { localRunEvents } from '../../../src/run/location.ts';

const config = resolveConfig({ preset: 'starpo-s', overrides: [...TINY_SOKOBAN_RESUME] });

async function iterationMetrics(root: string, runId: string): Promise<Record<string, number>[]> {
  const reader = localRunEvents(root);
  const out: Record<string, number>[] = [];
  for await (const e of replay(reader, runId)) if (e.kind === 'iteration') out.push((e as IterationEvent).metrics);
  await reader.close();
  return out;
}

const weights = (root: string, runId: string, iteration: number) =>
  readFileSync(join(root, runId, 'checkpoints', 'main', String(iteration).padStart(8, '0'), 'actor.model.safetensors'));

// Asynchronous: iteration i plays version i − 2, so when the crash hits, iteration 4's rollout (version 2) is
// played or under way beside iteration 3's update; the resumed run must play it again, from checkpoint 2's weights
// (and iteration 3's from checkpoint 1, which checkpoint 2 names).
const asyncConfig = resolveConfig({
  file: JSON.parse(canonicalConfigJSON(config)),
  overrides: ['asyncStaleness=1', 'offPolicyCorrection=tis'],
});

const straight = mkdtempSync(join(tmpdir(), 'starpo-straight-'));
const crashed = mkdtempSync(join(tmpdir(), 'starpo-crashed-'));
const moved = mkdtempSync(join(tmpdir(), 'starpo-moved-'));
const asyncStraight = mkdtempSync(join(tmpdir(), 'starpo-async-straight-'));
const asyncCrashed = mkdtempSync(join(tmpdir(), 'starpo-async-crashed-'));

// The crash: iteration 3's events are in the log, its checkpoint is not (killed between the two writes).
// Copied under another name before it resumes: the copy must resume as the same run, bitwise.
before(
  async () => {
    await trainEmbedded({ root: straight, runId: 'r', config });
    await trainEmbedded({ root: crashed, runId: 'r', config, stopAfter: 3 });
    rmSync(join(crashed, 'r', 'checkpoints', 'main', '00000003'), { recursive: true });
    cpSync(join(crashed, 'r'), join(moved, 'renamed'), { recursive: true });
    await trainEmbedded({ root: asyncStraight, runId: 'r', config: asyncConfig });
    // Stopped after iteration 3 (iteration 4's rollout already scheduled: its version 2 was out), then the
    // checkpoint that stop wrote is lost, as if killed between iteration 3's events and its checkpoint.
    const stop = new AbortController();
    const first = await trainEmbedded({
      root: asyncCrashed,
      runId: 'r',
      config: asyncConfig,
      signal: stop.signal,
      onIteration: (r) => {
        if (r.iteration === 3) stop.abort();
      },
    });
    assert.equal(first.lastIteration, 3);
    rmSync(join(asyncCrashed, 'r', 'checkpoints', 'main', '00000003'), { recursive: true });
  },
  { timeout: 900_000 },
);

test(
  "a run killed after iteration 3's events and resumed ends with the weights and metrics of an uninterrupted run",
  { timeout: 900_000 },
  async () => {
    const resumed = await trainEmbedded({ root: crashed, runId: 'r', resume: true });
    assert.equal(resumed.lastIteration, 4);
    assert.ok(!weights(straight, 'r', 3).equals(weights(straight, 'r', 4)), 'training must change the weights');
    assert.ok(weights(straight, 'r', 4).equals(weights(crashed, 'r', 4)), 'final actor weights differ');
    const [a, b] = [await iterationMetrics(straight, 'r'), await iterationMetrics(crashed, 'r')];
    assert.equal(a.length, 4);
    assert.ok(a[3]['actor/grad_norm'] > 0 && a[3]['critic/grad_norm'] > 0);
    assert.deepEqual(b, a);
  },
);

test(
  'the same run copied under another directory name resumes there bitwise equal, each iteration replayed once',
  { timeout: 900_000 },
  async () => {
    const resumed = await trainEmbedded({ root: moved, runId: 'renamed', resume: true });
    assert.equal(resumed.lastIteration, 4);
    assert.ok(weights(straight, 'r', 4).equals(weights(moved, 'renamed', 4)), 'final actor weights differ');
    assert.deepEqual(await iterationMetrics(moved, 'renamed'), await iterationMetrics(straight, 'r'));
  },
);

/** Every training trajectory of the log after replay's dedup, as iteration/group/index@policyVersion. */
async function trajectories(root: string): Promise<string[]> {
  const reader = localRunEvents(root);
  const out: string[] = [];
  for await (const e of replay(reader, 'r'))
    if (e.kind === 'trajectory' && e.split === 'train')
      out.push(`${e.iteration}/${e.group}/${e.rolloutIndex}@${e.policyVersion}`);
  await reader.close();
  return out.sort();
}

test(
  'an asynchronous run killed with a rollout in flight resumes bitwise: nothing lost, nothing twice',
  { timeout: 900_000 },
  async () => {
    const resumed = await trainEmbedded({ root: asyncCrashed, runId: 'r', resume: true });
    assert.equal(resumed.lastIteration, 4);
    assert.ok(weights(asyncStraight, 'r', 4).equals(weights(asyncCrashed, 'r', 4)), 'final actor weights differ');
    assert.ok(
      !weights(asyncStraight, 'r', 4).equals(weights(straight, 'r', 4)),
      'the asynchronous schedule must change training',
    );
    assert.deepEqual(await iterationMetrics(asyncCrashed, 'r'), await iterationMetrics(asyncStraight, 'r'));
    const played = await trajectories(asyncCrashed);
    assert.deepEqual(played, await trajectories(asyncStraight));
    assert.equal(played.length, 4 * 2 * 4);
    assert.deepEqual([...new Set(played.map((t) => t.replace(/\/.*@/, '@')))], ['1@0', '2@0', '3@1', '4@2']);
  },
);
