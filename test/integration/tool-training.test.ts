/**
 * Training an agent that calls tools, end to end with the real sandbox: the warm-start's demonstrations
 * run their code in it, rollouts and validation call it mid-turn, the OTC reward rescores the groups,
 * and replay recomputes every metric (tool metrics included) from the event log alone.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalEventReader, type TrajectoryEvent } from '../../src/events/index.ts';
import { toolmathProblem, type ToolmathConfig } from '../../src/envs/toolmath/index.ts';
import { resolveEnvConfig } from '../../src/envs/registry.ts';
import { resolveConfig } from '../../src/rl/config.ts';
import { trainEmbedded, type IterationReport } from '../../src/embedded/driver.ts';
import { demonstrations } from '../../src/rl/sft.ts';
import { openSandbox } from '../../src/rl/tool-use.ts';
import { resolveRunModel } from '../../src/rl/run-model.ts';
import { scratchTokenizer } from '../../src/rl/vocabulary.ts';
import { replayRun } from '../../src/replay/run.ts';

const TOOL_RUN = [
  'env=toolmath-multiply',
  'template=compact',
  'tools=code-inline',
  'toolReward=otc',
  'toolMaxCalls=2',
  'sftExtraToolCalls=1',
  'envGroups=2',
  'groupSize=4',
  'miniBatchSize=8',
  'iterations=2',
  'threads=1',
  'valSeeds=4',
  'valEvery=1',
  'modelLayers=1',
  'modelHidden=32',
  'modelFfn=64',
  'modelContext=320',
  'maxResponseTokens=180',
  'sftSteps=60',
  'sftEpisodes=32',
  'sftBatchSize=8',
  'sftLr=3e-3',
  'sandboxProcesses=1',
];

test(
  'demonstrations run the solutions in the real sandbox: each shows the exact product, masked out',
  { timeout: 60_000 },
  async () => {
    const c = resolveConfig({ preset: 'grpo', overrides: [...TOOL_RUN, 'sftEpisodes=6'] });
    const sandbox = openSandbox(c);
    try {
      const demos = await demonstrations(c, await resolveRunModel(c), sandbox);
      assert.equal(demos.length, 6);
      const tokenizer = scratchTokenizer();
      for (const d of demos) {
        const p = toolmathProblem(resolveEnvConfig('toolmath-multiply') as ToolmathConfig, d.record.seed);
        const hidden = tokenizer.decode(d.ids.filter((_, i) => d.mask[i] === 0));
        assert.ok(hidden.includes(`\`\`\`output ${p.answer}\`\`\``), hidden);
        assert.ok(tokenizer.decode(d.ids.filter((_, i) => d.mask[i] === 1)).endsWith(`\\boxed{${p.answer}}\n`));
        assert.equal(d.record.success, true);
      }
    } finally {
      await sandbox?.close();
    }
  },
);

test(
  'an OTC tool run trains, calls the sandbox, and replays with every metric equal',
  { timeout: 240_000 },
  async () => {
    const root = mkdtempSync(join(tmpdir(), 'starpo-tools-'));
    const config = resolveConfig({ preset: 'grpo', overrides: [...TOOL_RUN, 'klCoef=0'] });
    const reports: IterationReport[] = [];
    await trainEmbedded({ root, runId: 'r', config, onIteration: (r) => reports.push(r) });
    assert.equal(reports.length, 2);
    for (const r of reports) {
      for (const k of [
        'tool/calls_per_response',
        'tool/success_rate',
        'tool/productivity',
        'val/tool/calls_per_response',
      ]) {
        assert.ok(Number.isFinite(r.metrics[k]), `${k} at iteration ${r.iteration}`);
      }
    }
    const reader = createLocalEventReader({ root });
    try {
      const trajectories: TrajectoryEvent[] = [];
      for await (const e of reader.read('r')) if (e.kind === 'trajectory') trajectories.push(e);
      const calls = trajectories.flatMap((t) => t.turns.flatMap((turn) => turn.toolCalls));
      assert.ok(
        calls.some((c) => c.executed),
        'the warm-started model calls the sandbox',
      );
      assert.ok(calls.every((c) => c.name === 'js' && (c.executed || c.output === '')));
      // OTC: a wrong answer scores 0; a right one scores in (0, 1].
      for (const t of trajectories.filter((x) => x.split === 'train')) {
        assert.ok(
          t.success ? t.trajectoryReturn > 0 && t.trajectoryReturn <= 1 : t.trajectoryReturn === 0,
          JSON.stringify(t.turns),
        );
      }
      const out = await replayRun({ reader, runId: 'r' });
      assert.deepEqual(
        out.iterations.map((c) => [c.iteration, c.ok, c.mismatches, c.divergences]),
        [
          [1, true, [], []],
          [2, true, [], []],
        ],
      );
      assert.ok(out.iterations.every((c) => !c.notRecomputable.some((k) => k.includes('tool/'))));
    } finally {
      await reader.close();
    }
  },
);
