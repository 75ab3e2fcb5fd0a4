/**
 * `train --agent` end to end in the embedded driver, on a tiny random-init Qwen3 with the real tokenizer and chat
 * template: the example Countdown agent (openai SDK, calculator tool) trains, replays and reports; agents killed
 * mid-episode are rerun so that the run — trajectories and weights — equals one without kills, every episode
 * counted once; and a run stopped and resumed equals an uninterrupted one.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { TOKEN_ROLES } from '../../../src/agent/chat-format.ts';
import { createLocalEventReader, replay, type TrajectoryEvent } from '../../../src/events/index.ts';
import { replayRun } from '../../../src/replay/run.ts';
import { loadReport } from '../../../src/report/load.ts';
import { openSource } from '../../../src/report/source.ts';
import { trainEmbedded } from '../../../src/embedded/driver.ts';
import { realTokenizer } from '../agent/real-tokenizers.ts';
import { agentConfig, EXAMPLE_AGENT as EXAMPLE, SCRIPTED_AGENT as SCRIPTED } from './agent-run-config.ts';
import { writeTinyModel } from './tiny-hf-model.ts';

const scratch = mkdtempSync(join(tmpdir(), 'starpo-agent-run-'));
let model = '';
before(async () => {
  model = await writeTinyModel(join(scratch, 'qwen3'), 'qwen3', { dtype: 'BF16' });
});
after(() => rmSync(scratch, { recursive: true, force: true }));

async function trajectories(root: string): Promise<TrajectoryEvent[]> {
  const reader = createLocalEventReader({ root });
  const out: TrajectoryEvent[] = [];
  for await (const e of replay(reader, 'r')) if (e.kind === 'trajectory') out.push(e);
  await reader.close();
  return out;
}

const actorFile = (root: string, iteration: number, file = 'actor.model.safetensors') =>
  readFileSync(join(root, 'r', 'checkpoints', 'main', String(iteration).padStart(8, '0'), file));
/** An event without its times and the counts of its agent's attempts (what a rerun changes). */
function timeless({ startedAt: _, finishedAt: __, extras, ...e }: TrajectoryEvent) {
  const { attempts: ___, discardedCalls: ____, ...kept } = extras;
  return { ...e, extras: kept };
}

const SLOW = { timeout: 600_000 };

test(
  'the example Countdown agent trains end to end: logged tokens, loss on what it wrote; replay and report',
  SLOW,
  async () => {
    const root = mkdtempSync(join(scratch, 'example-'));
    // A random model earns no reward signal; skipNoSignal=false lets the step run so the update path is seen.
    await trainEmbedded({ root, runId: 'r', config: agentConfig(model, EXAMPLE, ['skipNoSignal=false']) });
    const logged = await trajectories(root);
    assert.deepEqual(
      ['train', 'val'].map((s) => logged.filter((t) => t.split === s).length),
      [8, 2],
    );
    const tok = realTokenizer('qwen3');
    for (const t of logged) {
      assert.equal(t.envName, 'agent');
      assert.match(tok.decode(t.tokenIds), /"name": "calculator"[\s\S]*Numbers: \d+, \d+, \d+\. Target: \d+/);
      const runs = [...t.tokenRoles.matchAll(new RegExp(`${TOKEN_ROLES.indexOf('assistant')}+`, 'g'))];
      const written = runs.map((r) =>
        tok.decode(t.tokenIds.slice(r.index, r.index + r[0].length)).replace(/<\|im_end\|>$/, ''),
      );
      assert.deepEqual(
        written,
        t.turns.map((turn) => turn.response),
      );
    }
    assert.ok(!actorFile(root, 0).equals(actorFile(root, 2)), 'the actor was trained');
    const reader = createLocalEventReader({ root });
    const checked = await replayRun({ reader, runId: 'r' }).finally(() => reader.close());
    assert.deepEqual(
      checked.iterations.map((c) => [c.iteration, c.ok]),
      [
        [1, true],
        [2, true],
      ],
    );
    const source = openSource(['r'], { kind: 'local', runsDir: root });
    const [report] = (await loadReport(source).finally(() => source.close())).runs;
    assert.deepEqual(
      [report.iterations.length, report.trajectories.length, report.legend, report.oracle],
      [2, 10, [], null],
    );
  },
);

const straight = (() => {
  let run: Promise<string> | null = null;
  return () =>
    (run ??= (async () => {
      const root = mkdtempSync(join(scratch, 'straight-'));
      await trainEmbedded({ root, runId: 'r', config: agentConfig(model, SCRIPTED) });
      return root;
    })());
})();

test(
  'agents killed mid-episode lose nothing and duplicate nothing: the run equals one without kills',
  SLOW,
  async () => {
    const root = mkdtempSync(join(scratch, 'killed-'));
    await trainEmbedded({ root, runId: 'r', config: agentConfig(model, `AGENT_KILL=odd ${SCRIPTED}`) });
    const [clean, killed] = [await trajectories(await straight()), await trajectories(root)];
    const train = killed.filter((t) => t.split === 'train');
    assert.equal(new Set(train.map((t) => `${t.iteration}/${t.group}/${t.rolloutIndex}`)).size, 2 * 2 * 2);
    assert.equal(train.length, 8);
    assert.deepEqual(
      train.map((t) => [t.extras.attempts, t.extras.discardedCalls, t.turns.length]),
      Array.from({ length: 4 }, () => [
        ['1', '0', 2],
        ['2', '1', 2],
      ]).flat(),
    );
    assert.ok(
      new Set(train.map((t) => t.trajectoryReturn)).size > 1,
      'returns vary: the update has advantages to follow',
    );
    assert.deepEqual(killed.map(timeless), clean.map(timeless));
    for (const file of ['actor.model.safetensors', 'actor.training_state.safetensors']) {
      assert.ok(actorFile(root, 2, file).equals(actorFile(await straight(), 2, file)), `${file} differs`);
    }
  },
);

test('an agent run stopped after iteration 1 and resumed equals an uninterrupted one', SLOW, async () => {
  const root = mkdtempSync(join(scratch, 'resumed-'));
  await trainEmbedded({ root, runId: 'r', config: agentConfig(model, SCRIPTED), stopAfter: 1 });
  await trainEmbedded({ root, runId: 'r', resume: true });
  assert.deepEqual((await trajectories(root)).map(timeless), (await trajectories(await straight())).map(timeless));
  assert.ok(actorFile(root, 2).equals(actorFile(await straight(), 2)));
});
