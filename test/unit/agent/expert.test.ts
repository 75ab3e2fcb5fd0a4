import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Episode } from '../../../src/agent/episode.ts';
import { writeExpertDataset, type ExpertRecord } from '../../../src/agent/expert.ts';
import { TEMPLATES, type TemplateName } from '../../../src/agent/templates.ts';
import { createEnv } from '../../../src/envs/registry.ts';

/** Replays the recorded assistant messages in a fresh environment; returns [success, return]. */
function replay(record: ExpertRecord): [boolean, number] {
  const episode = new Episode(createEnv(record.env), record.env, TEMPLATES[record.template]);
  assert.deepEqual(episode.start(record.seed), record.messages.slice(0, episode.messages.length));
  for (const m of record.messages) if (m.role === 'assistant') episode.respond(m.content);
  assert.deepEqual(episode.messages, record.messages);
  return [episode.success, episode.totalReward];
}

const CASES: Array<[string, TemplateName, number]> = [
  ['sokoban', 'full', 40],
  ['sokoban-large', 'compact', 15],
  ['sokoban-revocab', 'full-no-think', 15],
  ['frozenlake', 'compact', 30],
  ['bandit-test', 'full', 5],
  ['countdown', 'compact', 10],
];

test('every expert trajectory in the written dataset succeeds when replayed in the environment', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'starpo-expert-'));
  try {
    for (const [env, template, count] of CASES) {
      const path = join(dir, `${env}-${template}.jsonl`);
      const seeds = Array.from({ length: count }, (_, i) => i);
      const { written, skipped } = await writeExpertDataset(path, { env, seeds, template });
      const records = (await readFile(path, 'utf8'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as ExpertRecord);
      assert.equal(records.length, written);
      assert.equal(written + skipped, count);
      assert.ok(written >= count / 3, `${env}: only ${written} of ${count} kept`);
      for (const record of records) {
        const [success, total] = replay(record);
        assert.ok(success && record.success, `${env} seed ${record.seed}`);
        assert.ok(Math.abs(total - record.return) < 1e-9);
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('expert Sokoban turns follow a shortest solution split into turns of at most K actions', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'starpo-expert-'));
  try {
    const path = join(dir, 'k2.jsonl');
    await writeExpertDataset(path, { env: { type: 'sokoban', maxActionsPerTurn: 2 }, seeds: [0], template: 'compact' });
    const record = JSON.parse(await readFile(path, 'utf8')) as ExpertRecord;
    assert.deepEqual(
      record.turns.map((t) => t.actions),
      [['Down', 'Down'], ['Right', 'Down'], ['Left']],
    );
    assert.deepEqual(
      record.messages.filter((m) => m.role === 'assistant').map((m) => m.content),
      ['D|D', 'R|D', 'L'],
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
