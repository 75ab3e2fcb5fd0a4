import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveConfig } from '../../../src/rl/config.ts';
import { LEARNING_CASES, seedStudyCases, TINY } from '../../../src/bench/learning-cases.ts';
import { benchLearningSeeds, collapsedAt } from '../../../src/bench/learning-seeds.ts';
import { benchLearning, tokenTotals, trainCase, useTinyMode, type CasePoint } from '../../../src/bench/learning.ts';
import { ACTOR_NO_SIGNAL, KEPT_TOKENS, TOKENS_GENERATED } from '../../../src/rl/metric-names.ts';
import { benchTools } from '../../../src/bench/tools.ts';

test('every learning and seed-study case resolves to a valid config, at full size and tiny', () => {
  const cases = [...LEARNING_CASES, ...seedStudyCases()];
  assert.equal(seedStudyCases().length, 45);
  for (const k of cases) {
    const base = k.warmStart ? [...k.warmStart.overrides, 'sftSteps=0'] : [];
    for (const extra of [[], TINY])
      assert.doesNotThrow(
        () => resolveConfig({ preset: k.preset, overrides: [...base, ...k.overrides, ...extra] }),
        k.name,
      );
    if (k.warmStart)
      assert.doesNotThrow(() => resolveConfig({ overrides: [...k.warmStart!.overrides] }), k.warmStart.name);
  }
  const format = LEARNING_CASES.filter((k) => k.name.endsWith('-format')).map((k) =>
    resolveConfig({ overrides: [...k.warmStart!.overrides] }),
  );
  assert.deepEqual(
    format.map((c) => [c.env, c.sftPolicy, c.sftTarget, c.valSeeds]),
    [
      ['sokoban', 'random', 'episode', 256],
      ['frozenlake', 'random', 'episode', 256],
      ['frozenlake', 'random', 'episode', 256],
      ['sokoban-large', 'random', 'episode', 256],
      ['countdown', 'random', 'episode', 256],
      ['coord-frozenlake', 'random', 'episode', 256],
    ],
  );
});

/**
 * Sets `vars` and points TMPDIR (where the bench puts its warm starts and runs) at a scratch folder; the returned
 * function restores both and deletes the folder, so the suite leaves no runs behind.
 */
function benchEnv(vars: Record<string, string>): () => void {
  const names = ['TMPDIR', ...Object.keys(vars)];
  const before = names.map((n) => process.env[n]);
  const scratch = mkdtempSync(join(tmpdir(), 'starpo-bench-test-'));
  Object.assign(process.env, vars, { TMPDIR: scratch });
  return () => {
    names.forEach((n, i) => {
      if (before[i] === undefined) delete process.env[n];
      else process.env[n] = before[i];
    });
    rmSync(scratch, { recursive: true, force: true });
  };
}

const curve = (vals: Array<number | undefined>): CasePoint[] =>
  vals.map((val, i) => ({ iteration: i + 1, lineageId: 'main', success: 0, val, std: 0, entropy: 0 }));

test('a run counts as collapsed when its validation success ends below half its best, from the first such point', () => {
  assert.equal(collapsedAt(curve([0.2, undefined, 0.6, 0.25, 0.1])), 4);
  assert.equal(collapsedAt(curve([0.2, 0.6, 0.25, 0.5])), null); // recovered
  assert.equal(collapsedAt(curve([0.08, 0.02])), null); // never reached 0.1
  assert.equal(collapsedAt(curve([0.5, 0.4])), null);
});

test('bench learning-seeds refuses an unknown environment, preset or seed before training anything', async () => {
  const lines: string[] = [];
  await assert.rejects(
    benchLearningSeeds({ envs: 'sokoban,chess' }, (l) => lines.push(l)),
    /config envs: unknown environments chess; known: sokoban, frozenlake/,
  );
  await assert.rejects(
    benchLearningSeeds({ presets: 'ppo' }, (l) => lines.push(l)),
    /config presets: unknown presets ppo; known: starpo-s, starpo, grpo/,
  );
  await assert.rejects(
    benchLearningSeeds({ seeds: '0,7' }, (l) => lines.push(l)),
    /config seeds: unknown seeds 7; known: 0, 1, 2/,
  );
  assert.deepEqual(lines, []);
});

test(
  'bench learning-seeds (tiny): one line per seed, then a summary with the budget as set and the report command',
  {
    timeout: 600_000,
  },
  async () => {
    const lines: Array<Record<string, unknown>> = [];
    const restore = benchEnv({ STARPO_BENCH_SET: 'envGroups=2' });
    try {
      await benchLearningSeeds({ tiny: true, envs: 'frozenlake', presets: 'grpo' }, (l) => lines.push(JSON.parse(l)));
    } finally {
      restore();
    }
    assert.deepEqual(
      lines.map((l) => [l.bench, l.case ?? l.preset]),
      [
        ['learning', 'seeds-frozenlake-grpo-s0'],
        ['learning', 'seeds-frozenlake-grpo-s1'],
        ['learning', 'seeds-frozenlake-grpo-s2'],
        ['learning-seeds', 'grpo'],
      ],
    );
    const { bench, valSuccessMean, valSuccessStd, report, ...summary } = lines[3]!;
    assert.equal(bench, 'learning-seeds');
    assert.deepEqual(summary, {
      study: 'frozenlake',
      env: 'frozenlake-noslip',
      envSpecId: lines[0]!.envSpecId,
      preset: 'grpo',
      iterations: 2,
      envGroups: 2, // STARPO_BENCH_SET's, over the tiny mode's 4
      groupSize: 4,
      lrActor: 2e-4,
      seeds: [0, 1, 2],
      collapsed: [],
      echoTrapFirings: [0, 1, 2].map((seed) => ({ seed, at: [] })),
    });
    // Format rates of the policy before and after RL, as shares of every validation turn.
    for (const key of ['warmStartFormat', 'format']) {
      const f = lines[0]![key] as Record<string, number>;
      assert.deepEqual(Object.keys(f), ['turns', 'parsed', 'cut', 'echo'], key);
      assert.ok(f.turns! > 0 && [f.parsed!, f.cut!, f.echo!].every((x) => x >= 0 && x <= 1), key);
    }
    const finals = lines.slice(0, 3).map((l) => l.valSuccess as number);
    assert.ok(Math.abs((valSuccessMean as number) - finals.reduce((a, b) => a + b) / 3) < 1e-4);
    assert.ok((valSuccessStd as number) >= 0);
    assert.match(report as string, /^npx starpo report (\S+seeds-frozenlake-grpo-s[012] ){3}--png$/);
  },
);

test('a bad STARPO_BENCH_SET key is refused in one line before any warm start is trained or written', async () => {
  const lines: string[] = [];
  const restore = benchEnv({ STARPO_BENCH_SET: 'envGroupz=3' });
  const scratch = process.env.TMPDIR!;
  try {
    await assert.rejects(
      benchLearningSeeds({ tiny: true, envs: 'frozenlake', presets: 'grpo' }, (l) => lines.push(l)),
      /config envGroupz: unknown key; did you mean "envGroups"\?/,
    );
    assert.deepEqual(readdirSync(scratch), []);
  } finally {
    restore();
  }
  assert.deepEqual(lines, []);
});

test('an unknown case name is refused in one line naming the known ones, before anything trains', async () => {
  const restore = benchEnv({});
  const scratch = process.env.TMPDIR!;
  try {
    await assert.rejects(
      benchLearning({ tiny: true, cases: 'bandit,nosuchcase' }),
      /config cases: unknown learning cases nosuchcase; known: bandit, /,
    );
    await assert.rejects(benchTools('nosuchcase'), /config cases: unknown tool cases nosuchcase; known: /);
    assert.deepEqual(readdirSync(scratch), []);
  } finally {
    restore();
  }
});

test(
  'a case kept in STARPO_BENCH_RUNS_DIR that stopped resumes there: its curve is the whole run, as an unstopped one',
  { timeout: 600_000 },
  async () => {
    const bandit = LEARNING_CASES.find((k) => k.name === 'bandit')!;
    const straightDir = mkdtempSync(join(tmpdir(), 'starpo-bench-runs-'));
    const crashedDir = mkdtempSync(join(tmpdir(), 'starpo-bench-runs-'));
    useTinyMode(true);
    const restore = benchEnv({ STARPO_BENCH_RUNS_DIR: straightDir });
    try {
      const straight = await trainCase(bandit);
      assert.equal(straight.resumed, undefined);
      assert.equal(straight.runDir, join(straightDir, 'bandit'));
      process.env.STARPO_BENCH_RUNS_DIR = crashedDir;
      const crash = (r: { iteration: number }) => {
        if (r.iteration === 2) throw new Error('killed');
      };
      await assert.rejects(trainCase(bandit, [], crash), /killed/);
      const resumed = await trainCase(bandit);
      assert.deepEqual(resumed.resumed && { fromIteration: resumed.resumed.fromIteration }, { fromIteration: 1 });
      assert.ok(resumed.resumed!.earlierSeconds >= 0);
      assert.equal(resumed.loads.length, 1, 'this process trained iteration 2 only');
      assert.deepEqual(
        resumed.reports.map((r) => [r.iteration, r.metrics]),
        straight.reports.map((r) => [r.iteration, r.metrics]),
      );
      assert.deepEqual(resumed.curve, straight.curve);
      // Another config under the same runs directory is refused in one line, before anything trains.
      await assert.rejects(
        trainCase(bandit, ['lrActor=1e-3']),
        /config STARPO_BENCH_RUNS_DIR: .*bandit was started with other settings \(lrActor .* there, 0\.001 here\)/,
      );
    } finally {
      restore();
      useTinyMode(false);
      rmSync(straightDir, { recursive: true, force: true });
      rmSync(crashedDir, { recursive: true, force: true });
    }
  },
);

test('token totals: every rollout token, and the kept ones once per epoch where the actor stepped', () => {
  const report = (m: Record<string, number>) => ({ iteration: 1, iterations: 3, metrics: m, timingsMs: {} });
  const metrics: Record<string, number>[] = [
    { [TOKENS_GENERATED]: 100, [KEPT_TOKENS]: 40, [ACTOR_NO_SIGNAL]: 0 },
    { [TOKENS_GENERATED]: 90, [KEPT_TOKENS]: 90, [ACTOR_NO_SIGNAL]: 1 }, // skipped: nothing trained
    { [TOKENS_GENERATED]: 80, [KEPT_TOKENS]: 0 },
  ];
  const reports = metrics.map((m) => ({ ...report(m), warning: null, lineageId: 'main' }));
  assert.deepEqual(tokenTotals({ ppoEpochs: 2 }, reports), { generated: 270, trained: 80 });
});
