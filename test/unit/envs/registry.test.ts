import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ENV_PRESETS, createEnv, resolveEnvConfig, type EnvConfig } from '../../../src/envs/registry.ts';
import { envSpecId } from '../../../src/envs/spec-id.ts';
import { oracleSuccess } from '../../../src/envs/oracle.ts';
import { ConfigError } from '../../../src/errors.ts';

test('a preset resolves to a complete config', () => {
  assert.deepEqual(resolveEnvConfig('sokoban-large'), {
    type: 'sokoban',
    width: 8,
    height: 8,
    boxes: 2,
    searchDepth: 10,
    generator: 'ragen',
    maxSteps: 100,
    vocabulary: 'standard',
    observation: 'grid',
    maxTurns: 5,
    maxActionsPerTurn: 5,
    maxActionsPerTrajectory: 10,
  });
});

test('a misspelt key, an unknown type and an out-of-range value name their field', () => {
  const field = (input: Parameters<typeof resolveEnvConfig>[0]): string => {
    try {
      resolveEnvConfig(input);
      return 'no error';
    } catch (err) {
      return err instanceof ConfigError ? err.field : 'other error';
    }
  };
  assert.equal(field({ type: 'sokoban', widht: 7 }), 'env.widht');
  assert.equal(field({ type: 'chess' }), 'env.type');
  assert.equal(field({ type: 'frozenlake', pFrozen: 2 }), 'env.pFrozen');
  assert.equal(field('no-such-preset'), 'env');
});

test('every preset builds an environment that resets, renders and survives a JSON round trip', () => {
  for (const name of Object.keys(ENV_PRESETS)) {
    const config = resolveEnvConfig(name);
    assert.deepEqual(JSON.parse(JSON.stringify(config)), config);
    const env = createEnv(config);
    assert.equal(env.reset(1), env.render());
    assert.equal(env.anchor(), env.render());
    assert.equal(env.done, false);
  }
});

test('oracleSuccess averages the per-seed ceilings', () => {
  const summary = oracleSuccess('countdown', [0, 1, 2]);
  assert.deepEqual([summary.env, summary.seeds, summary.successRate], ['countdown', 3, 1]);
});

test('the environment-spec id hashes the resolved config, whatever the key order, and changes with any setting', () => {
  assert.equal(envSpecId(resolveEnvConfig('sokoban')), 'sokoban-a8f82da8');
  const reordered = Object.fromEntries(Object.entries(resolveEnvConfig('sokoban')).reverse()) as EnvConfig;
  assert.equal(envSpecId(reordered), 'sokoban-a8f82da8');
  assert.equal(envSpecId(resolveEnvConfig('sokoban-gym')), 'sokoban-302f1ff7');
  assert.notEqual(envSpecId(resolveEnvConfig({ type: 'sokoban', maxActionsPerTurn: 6 })), 'sokoban-a8f82da8');
  assert.equal(envSpecId(resolveEnvConfig('coord-frozenlake')), 'frozenlake-08b6cfdb');
});
