import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { colourOn, newTable } from '../../../src/terminal.ts';
import { modelLine, trainingLine, whereLine } from '../../../src/cli/run-summary.ts';
import { envSpecId } from '../../../src/envs/index.ts';
import { runEnvConfig } from '../../../src/rl/run-env.ts';
import { resolveConfig } from '../../../src/rl/config.ts';
import { resolveRunModel } from '../../../src/rl/run-model.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

test('colour only on a terminal, never with NO_COLOR set (empty counts as unset) or TERM=dumb', () => {
  const tty = { isTTY: true };
  assert.equal(colourOn(tty, {}), true);
  assert.equal(colourOn({ isTTY: false }, {}), false);
  assert.equal(colourOn({}, {}), false);
  assert.equal(colourOn(tty, { NO_COLOR: '1' }), false);
  assert.equal(colourOn(tty, { NO_COLOR: '' }), true);
  assert.equal(colourOn(tty, { TERM: 'dumb' }), false);
});

test('a table without colour has no escape codes; with colour its header and borders have them', () => {
  const render = (colour: boolean) => {
    const table = newTable(['a', 'b'], colour);
    table.push(['1', '2']);
    return table.toString();
  };
  assert.equal(render(false), ['┌───┬───┐', '│ a │ b │', '├───┼───┤', '│ 1 │ 2 │', '└───┴───┘'].join('\n'));
  assert.match(render(true), /\x1b\[31m a \x1b\[39m/);
});

test('train says what trains, on which model and where in three lines of at most 120 characters', async () => {
  const overrides = [
    'env=bandit',
    'iterations=3',
    'envGroups=4',
    'groupSize=4',
    'miniBatchSize=4',
    'modelLayers=1',
    'modelHidden=32',
    'modelFfn=64',
  ];
  const config = resolveConfig({ preset: 'grpo', overrides });
  const spec = envSpecId(runEnvConfig(config));
  const lines = [
    trainingLine(config, false),
    modelLine(config, await resolveRunModel(config)),
    whereLine('runs/2026-12-02T03-17-46-579Z', true),
  ];
  assert.deepEqual(lines, [
    `grpo on bandit (env spec ${spec}): 3 iterations of 4 groups × 4`,
    'model: 12.7k parameters from scratch (1 layer, hidden 32)',
    'saved in runs/2026-12-02T03-17-46-579Z/ (config, events, checkpoints, train.log); full config: --print-config',
  ]);
  assert.ok(lines.every((l) => l.length <= 120));
  assert.equal(trainingLine(config, true), `grpo (resumed) on bandit (env spec ${spec}): 3 iterations of 4 groups × 4`);
  // Named by what the config is, not by the flag: GRPO's fields spelled out over the default preset read "grpo".
  const spelled = resolveConfig({
    overrides: [
      ...overrides,
      'advantage=grpo',
      'critic=false',
      'filter=none',
      'whitenAdvantages=false',
      'klCoef=0.001',
      'clipHigh=0.2',
    ],
  });
  assert.match(trainingLine(spelled, false), /^grpo on bandit/);
  assert.match(
    trainingLine(resolveConfig({ overrides: [...overrides, 'filter=none'] }), false),
    /^custom \(gae advantages, critic, filter none\) on bandit/,
  );
  assert.match(trainingLine(resolveConfig({ preset: 'dapo', overrides }), false), /^dapo on bandit/);
});

test('npx starpo prints no npm warning (the .npmrc holds only settings npm knows)', { timeout: 60_000 }, () => {
  const r = spawnSync('npm', ['exec', '--offline', '--', 'starpo', '--version'], { cwd: ROOT, encoding: 'utf8' });
  assert.deepEqual([r.status, r.stdout, r.stderr], [0, '0.1.0\n', '']);
});
