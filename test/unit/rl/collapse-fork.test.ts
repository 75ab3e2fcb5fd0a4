/**
 * onCollapse on a small collapsing case: Bandit from a format-only warm start with a learning rate 100×
 * too large (3e-2; 3e-4 learns it). One update breaks the policy (success 0.44 → 0), the detector fires at
 * iteration 10 (its warm-up), and with onCollapse=warn the run stays at 0. With fork it goes back to
 * checkpoint 0 (the fall began in iteration 2's window), halves the learning rates, collapses again,
 * halves again (7.5e-3) and learns. About 70 iterations of a tiny model in all.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveConfig, type RlConfig } from '../../../src/rl/config.ts';
import { trainEmbedded } from '../../../src/embedded/driver.ts';
import { collapseAction, lineageConfig } from '../../../src/rl/collapse-action.ts';
import { createLocalEventReader, replay, type StarpoEvent } from '../../../src/events/index.ts';

const COLLAPSING = [
  'env=bandit',
  'envGroups=4',
  'groupSize=8',
  'miniBatchSize=32',
  'iterations=25',
  'threads=1',
  'valSeeds=32',
  'valEvery=5',
  'sftSteps=60',
  'sftPolicy=random',
  'sftEpisodes=256',
  'lrActor=3e-2',
  'lrCritic=1e-3',
  'gradClip=1000',
  'collapseEvery=0',
  'keepEveryCheckpoint=1',
];
const config = (onCollapse: string, extra: string[] = []) =>
  resolveConfig({ preset: 'starpo', overrides: [...COLLAPSING, `onCollapse=${onCollapse}`, ...extra] });

async function train(
  c: RlConfig,
  stopAfter?: number,
): Promise<{ root: string; events: StarpoEvent[]; lastIteration: number }> {
  const root = mkdtempSync(join(tmpdir(), 'starpo-collapse-'));
  const { lastIteration } = await trainEmbedded({ root, runId: 'r', config: c, stopAfter });
  return { root, events: await surviving(root), lastIteration };
}

/** The surviving history (replay), or every event as logged. */
async function surviving(root: string, all = false): Promise<StarpoEvent[]> {
  const reader = createLocalEventReader({ root });
  const events: StarpoEvent[] = [];
  for await (const e of all ? reader.read('r') : replay(reader, 'r')) events.push(e);
  await reader.close();
  return events;
}

const finalVal = (events: StarpoEvent[]) =>
  events.filter((e) => e.kind === 'iteration').at(-1)!.metrics['val/success_rate'];

test(
  'a forked run ends above the collapsed one, each fork recorded with its reason and halved learning rates',
  { timeout: 600_000 },
  async () => {
    const collapsed = await train(config('warn'));
    const forked = await train(config('fork'));
    assert.equal(finalVal(collapsed.events), 0);
    assert.ok(finalVal(forked.events) > finalVal(collapsed.events) + 0.5, `forked ${finalVal(forked.events)}`);
    // Both forks went back to checkpoint 0 (main's), so the first fork's lineage is superseded by the second.
    const forks = (await surviving(forked.root, true)).filter((e) => e.kind === 'run' && e.action === 'FORKED');
    assert.deepEqual(
      forks.map((e) => e.kind === 'run' && [e.lineageId, e.parentLineageId, e.fromIteration, e.forks]),
      [
        ['f1-0', 'main', 0, 1],
        ['f2-0', 'main', 0, 2],
      ],
    );
    for (const e of forks)
      assert.match(e.kind === 'run' ? (e.reason ?? '') : '', /^Echo Trap suspected at iteration \d+: .* × 0\.5/);
    const iterations = forked.events.filter((e) => e.kind === 'iteration');
    assert.deepEqual([iterations.length, new Set(iterations.map((e) => e.lineageId))], [25, new Set(['f2-0'])]);
  },
);

test(
  'onCollapse=stop ends the run at the warning; a run halted before taking it stops on resume',
  { timeout: 300_000 },
  async () => {
    const stopped = await train(config('stop'));
    assert.equal(stopped.lastIteration, 10);
    const halted = await train(config('stop'), 10);
    const resumed = await trainEmbedded({ root: halted.root, runId: 'r', resume: true });
    assert.equal(resumed.lastIteration, 10);
    assert.equal((await surviving(halted.root)).filter((e) => e.kind === 'iteration').length, 10);
  },
);

test('the fork decision: lr × forkLrScale per fork, back before the first sign, a stop after maxForks', () => {
  const c = config('fork', ['maxForks=1']);
  const warning = {
    iteration: 12,
    message: 'Echo Trap suspected at iteration 12: …',
    evidence: { firstSignIteration: 7 },
  };
  assert.deepEqual(collapseAction(c, 0, warning), {
    kind: 'fork',
    iteration: 12,
    before: 7,
    forks: 1,
    reason:
      'Echo Trap suspected at iteration 12: …; first sign at iteration 7, so the run forks from the newest ' +
      "checkpoint before it with lrActor and lrCritic × 0.5 (× 0.5 of the config's)",
  });
  assert.equal(collapseAction(c, 1, warning)?.kind, 'stop');
  assert.equal(collapseAction(config('warn'), 0, warning), null);
  assert.deepEqual([lineageConfig(c, 2).lrActor, lineageConfig(c, 2).lrCritic], [3e-2 * 0.25, 1e-3 * 0.25]);
});
