import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { resumeCommand, type ResumeDurable } from '../../../src/cli/commands/resume.ts';
import { replayCommand } from '../../../src/cli/commands/replay.ts';
import { tinyRun } from '../replay/tiny-run.ts';

test('resume --from-iteration 1 forks lineage r1, and the result replays clean', { timeout: 120_000 }, async () => {
  const root = await tinyRun('grpo');
  const lines: string[] = [];
  await resumeCommand('r', { fromIteration: '1', runsDir: root }, (l) => lines.push(l));
  assert.equal(lines.length, 3);
  assert.match(lines[2], /^run r: lineage r1 continued from iteration 1 to 3 \(environment spec bandit-[0-9a-f]{8}\);/);
  const replayed: string[] = [];
  const flags = { source: 'files', runsDir: root, select: 'all', split: 'all', json: true };
  const code = await replayCommand('r', flags, (l) => replayed.push(l));
  const its = replayed.map((l) => JSON.parse(l)).filter((j) => j.type === 'iteration');
  assert.deepEqual([code, its.map((j) => `${j.lineageId}@${j.iteration}`)], [0, ['main@1', 'r1@2', 'r1@3']]);
  await assert.rejects(resumeCommand('r', { fromIteration: '3', runsDir: root }), /the run ends at iteration 3/);
});

test('resume --durable hands the run id, iteration and runs directory to the durable driver', async () => {
  const calls: unknown[] = [];
  const fake: ResumeDurable = async (...args) => {
    calls.push(args);
    return { workflowId: 'w' };
  };
  const lines: string[] = [];
  const flags = { fromIteration: '4', runsDir: 'ignored', durable: true };
  await resumeCommand(
    'runs/x',
    flags,
    (l) => lines.push(l),
    async () => fake,
  );
  assert.deepEqual([calls, lines], [[['x', 4, { runsDir: 'runs' }]], ['{"workflowId":"w"}']]);
});

test('resume needs --from-iteration', async () => {
  await assert.rejects(resumeCommand('x', { runsDir: 'runs' }), /--from-iteration: required/);
});

test(
  'resume over a damaged log names the iterations still resumable; --allow-partial resumes from one',
  {
    timeout: 120_000,
  },
  async () => {
    const root = await tinyRun('grpo');
    const events = join(root, 'r', 'events');
    const blocks = readFileSync(join(events, 'segments.index'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line.slice(line.indexOf(' ') + 1)) as { at: number; len: number; n: number });
    const iteration2 = blocks.filter((b) => b.n > 1)[1]!; // iteration 1's rollout block, then iteration 2's
    const segment = join(events, '00000001.avro');
    const bytes = readFileSync(segment);
    bytes[iteration2.at + 10] ^= 0xff;
    writeFileSync(segment, bytes);
    const dir = join(root, 'r');
    // Checkpoint 0 is kept (it holds GRPO's reference model), so the run can resume from it too.
    const plain =
      'iterations it can still resume from: 0, 1; ' +
      `continue with \`starpo resume ${dir} --from-iteration 1 --allow-partial\``;
    await assert.rejects(
      resumeCommand('r', { fromIteration: '1', runsDir: root }),
      (err: Error) => err.message.startsWith('event log damaged (checksum-mismatch)') && err.message.includes(plain),
    );
    await assert.rejects(
      resumeCommand('r', { fromIteration: '2', runsDir: root, allowPartial: true }),
      /--from-iteration: 2 is past what the damaged log still records; resumable iterations: 0, 1$/,
    );
    const lines: string[] = [];
    await resumeCommand('r', { fromIteration: '1', runsDir: root, allowPartial: true }, (l) => lines.push(l));
    assert.match(lines.at(-1)!, /^run r: lineage r1 continued from iteration 1 to 3 /);
  },
);
