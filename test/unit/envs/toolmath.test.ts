import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  TOOLMATH,
  TOOLMATH_KINDS,
  ToolmathEnv,
  boxedInteger,
  countDigitSum,
  powMod,
  toolmathProblem,
  type ToolmathConfig,
} from '../../../src/envs/toolmath/index.ts';
import { resolveEnvConfig } from '../../../src/envs/registry.ts';
import { ConfigError } from '../../../src/errors.ts';
import { Episode, TEMPLATES } from '../../../src/agent/index.ts';

const config = TOOLMATH.defaults;

test('a seed gives the same problem twice and seeds cover every kind', () => {
  assert.deepEqual(toolmathProblem(config, 17), toolmathProblem(config, 17));
  const kinds = new Set(Array.from({ length: 60 }, (_, s) => toolmathProblem(config, s).kind));
  assert.deepEqual([...kinds].sort(), [...TOOLMATH_KINDS].sort());
});

test('seed 0 is a fixed multiplication with its exact product', () => {
  const p = toolmathProblem(config, 0);
  assert.deepEqual(p, {
    kind: 'multiply',
    text: 'Compute 75794006 * 39690611.',
    answer: '3008310408277666',
    code: 'console.log(75794006n * 39690611n)',
  });
  assert.equal(75794006n * 39690611n, 3008310408277666n);
});

test('digit-sum counting by dynamic programming agrees with brute force', () => {
  assert.equal(countDigitSum(100, 1), 3);
  assert.equal(countDigitSum(9, 5), 1);
  for (const [n, s] of [
    [1458, 15],
    [8210, 20],
    [99999, 9],
    [12345, 7],
  ]) {
    let brute = 0;
    for (let i = 1; i <= n; i++) if (Array.from(String(i), Number).reduce((a, b) => a + b, 0) === s) brute++;
    assert.equal(countDigitSum(n, s), brute, `n=${n} s=${s}`);
  }
});

test('modular powers by squaring', () => {
  assert.equal(powMod(2n, 10n, 1000n), 24n);
  assert.equal(powMod(3n, 0n, 7n), 1n);
  assert.equal(powMod(110n, 5286n, 2931n), 2824n);
});

test('answers are read from the last \\boxed{} as canonical integers', () => {
  assert.equal(boxedInteger('\\boxed{1,234}'), '1234');
  assert.equal(boxedInteger('first \\boxed{1} then \\boxed{ -007 }'), '-7');
  assert.equal(boxedInteger('\\boxed{12.5}'), null);
  assert.equal(boxedInteger('\\boxed{12'), null);
  assert.equal(boxedInteger('42'), null);
});

test('a right answer pays 1 and succeeds, a wrong one pays 0; the episode is one step', () => {
  const env = new ToolmathEnv(config);
  env.reset(0);
  const right = env.step(env.matchAction('so \\boxed{3008310408277666}') as string);
  assert.deepEqual([right.reward, right.done, right.success, env.success], [1, true, true, true]);
  assert.throws(() => env.step('1'));
  env.reset(0);
  assert.deepEqual([env.step('3008310408277667').reward, env.success], [0, false]);
});

test('compact and full templates parse a boxed answer; the expert answer succeeds', () => {
  const c = resolveEnvConfig('toolmath') as ToolmathConfig;
  const compact = new Episode(new ToolmathEnv(c), c, TEMPLATES.compact);
  compact.start(0);
  assert.equal(compact.respond('\\boxed{3008310408277666}').success, true);
  const full = new Episode(new ToolmathEnv(c), c, TEMPLATES.full);
  full.start(0);
  assert.equal(full.respond('<think>big</think><answer>\\boxed{3008310408277666}</answer>').envReward, 1);
  const env = new ToolmathEnv(c);
  env.reset(5);
  const [action] = TOOLMATH.expert!(c, env.snapshot(), { turnsLeft: 1, actionsLeft: 1, maxActionsPerTurn: 1 });
  assert.equal(env.step(env.matchAction(action) as string).success, true);
});

test('config errors name the field', () => {
  const field = (name: string) => (e: unknown) => e instanceof ConfigError && e.field === name;
  assert.throws(() => resolveEnvConfig({ type: 'toolmath', kinds: ['calculus'] }), field('env.kinds'));
  assert.throws(() => resolveEnvConfig({ type: 'toolmath', kinds: [] }), field('env.kinds'));
  assert.throws(() => resolveEnvConfig({ type: 'toolmath', scale: 4 }), field('env.scale'));
});
