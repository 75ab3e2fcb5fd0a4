import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveConfig, type RlConfig } from '../../../src/rl/config.ts';
import { trainEmbedded } from '../../../src/embedded/driver.ts';
import { replay, type IterationEvent, type StarpoEvent } from '../../../src/events/index.ts';
import { localRunEvents } from '../../../src/run/location.ts';

const tiny = (extra: string[]): RlConfig =>
  resolveConfig({
    preset: 'starpo-s',
    overrides: [
      'env=sokoban',
      'maxTurns=2',
      'envGroups=2',
      'groupSize=4',
      'miniBatchSize=4',
      'iterations=3',
      'threads=1',
      'valSeeds=2',
      'valEvery=2',
      'modelLayers=1',
      'modelHidden=32',
      'modelFfn=64',
      'lrActor=1e-3',
      'lrCritic=1e-3',
      'filter=none',
      'maxResponseTokens=8',
      ...extra,
    ],
  });

async function events(root: string): Promise<StarpoEvent[]> {
  const reader = localRunEvents(root);
  const out: StarpoEvent[] = [];
  for await (const e of replay(reader, 'r')) out.push(e);
  await reader.close();
  return out;
}

const actor = (root: string, i: number) =>
  readFileSync(join(root, 'r', 'checkpoints', 'main', String(i).padStart(8, '0'), 'actor.model.safetensors'));
const roots = { sync: '', async: '', tis: '' };

const settings = { sync: [], async: ['asyncStaleness=1'], tis: ['asyncStaleness=1', 'offPolicyCorrection=tis'] };

before(
  async () => {
    for (const [name, extra] of Object.entries(settings) as [keyof typeof roots, string[]][]) {
      roots[name] = mkdtempSync(join(tmpdir(), `starpo-${name}-`));
      await trainEmbedded({ root: roots[name], runId: 'r', config: tiny(extra) });
    }
  },
  { timeout: 600_000 },
);

test("each trajectory event names the version that played it: the schedule's for training, the new policy for validation", async () => {
  const played = (await events(roots.async)).flatMap((e) =>
    e.kind === 'trajectory' ? [`${e.split}${e.iteration}@${e.policyVersion}`] : [],
  );
  assert.deepEqual([...new Set(played)], ['train1@0', 'train2@0', 'val2@2', 'train3@1', 'val3@3']);
  const sync = (await events(roots.sync)).flatMap((e) =>
    e.kind === 'trajectory' ? [`${e.split}${e.iteration}@${e.policyVersion}`] : [],
  );
  assert.deepEqual([...new Set(sync)], ['train1@0', 'train2@1', 'val2@2', 'train3@2', 'val3@3']);
});

test('staleness 1 trains iteration 1 exactly as on-policy (both play version 0), then plays the older version', async () => {
  assert.ok(actor(roots.sync, 1).equals(actor(roots.async, 1)), 'iteration 1 plays version 0 in both schedules');
  assert.ok(!actor(roots.sync, 3).equals(actor(roots.async, 3)), 'iteration 2 onwards plays another policy');
  const metrics = (await events(roots.async)).flatMap((e) =>
    e.kind === 'iteration' ? [(e as IterationEvent).metrics] : [],
  );
  assert.deepEqual(
    metrics.map((m) => m['async/policy_lag']),
    [0, 1, 1],
  );
});

test('truncated importance sampling reports its ratios and changes the update', async () => {
  const metrics = (await events(roots.tis)).flatMap((e) =>
    e.kind === 'iteration' ? [(e as IterationEvent).metrics] : [],
  );
  assert.equal(metrics.length, 3);
  for (const m of metrics) {
    assert.ok(Math.abs(m['tis/ratio_mean'] - 1) < 0.2 && m['tis/ratio_max'] >= m['tis/ratio_mean'], JSON.stringify(m));
    assert.ok(m['tis/capped_share'] >= 0 && m['tis/capped_share'] < 0.5);
  }
  assert.ok(!actor(roots.async, 3).equals(actor(roots.tis, 3)));
});

test('a fork from checkpoint 2 plays iteration 3 with the version checkpoint 2 names, as the original did', async () => {
  const forked = await trainEmbedded({ root: roots.async, runId: 'r', fork: { fromIteration: 2 } });
  const lineage = (l: string) =>
    readFileSync(join(roots.async, 'r', 'checkpoints', l, '00000003', 'actor.model.safetensors'));
  assert.equal(forked.lastIteration, 3);
  assert.ok(lineage(forked.lineageId).equals(lineage('main')));
});

// Bandit from a format-only start with a learning rate far too large: with staleness 1 it collapses, forks back
// to checkpoint 0 twice (onCollapse=fork) and stops at the third warning.
const collapsing = resolveConfig({
  preset: 'starpo',
  overrides: [
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
    'lrActor=1e-1',
    'lrCritic=1e-3',
    'gradClip=1000',
    'collapseEvery=0',
    'keepEveryCheckpoint=1',
    'onCollapse=fork',
    'asyncStaleness=1',
  ],
});

test(
  'a fork on collapse restarts the rollouts from the fork point: ' +
    'the schedule holds there, and a rerun is bitwise equal',
  { timeout: 600_000 },
  async () => {
    const [a, b] = [mkdtempSync(join(tmpdir(), 'starpo-fork-a-')), mkdtempSync(join(tmpdir(), 'starpo-fork-b-'))];
    const first = await trainEmbedded({ root: a, runId: 'r', config: collapsing });
    await trainEmbedded({ root: b, runId: 'r', config: collapsing });
    const played = (await events(a)).flatMap((e) => (e.kind === 'trajectory' && e.split === 'train' ? [e] : []));
    assert.ok(first.lineageId.startsWith('f'), `forked: ${first.lineageId}`);
    assert.ok(played.every((e) => e.lineageId === first.lineageId && e.policyVersion === Math.max(0, e.iteration - 2)));
    const last = (root: string) =>
      readFileSync(
        join(
          root,
          'r',
          'checkpoints',
          first.lineageId,
          String(first.lastIteration).padStart(8, '0'),
          'actor.model.safetensors',
        ),
      );
    assert.ok(last(a).equals(last(b)));
  },
);
