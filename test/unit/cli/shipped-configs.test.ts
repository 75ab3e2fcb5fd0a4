// The configs/ files the README and the docs name: each resolves, and the SmolLM2 recipe is the one its benchmark
// case measured, so the two cannot drift apart.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { LEARNING_CASES } from '../../../src/bench/learning-cases.ts';
import { configFromJSON, resolveConfig } from '../../../src/rl/config.ts';

const CONFIGS = fileURLToPath(new URL('../../../configs/', import.meta.url));
const read = (name: string) => configFromJSON(readFileSync(`${CONFIGS}${name}`, 'utf8'), `configs/${name}`);

test('every shipped config resolves', () => {
  const names = readdirSync(CONFIGS).filter((n) => n.endsWith('.json'));
  assert.ok(names.length >= 4);
  for (const name of names) assert.doesNotThrow(() => read(name), name);
});

test('configs/smollm2-bandit.json is bench learning smollm2-bandit in one run: its warm start, then its RL', () => {
  const bench = LEARNING_CASES.find((c) => c.name === 'smollm2-bandit')!;
  assert.ok(bench.warmStart);
  // The bench trains the warm start as a run of its own (sftSteps > 0, stopped at checkpoint 0) and starts the case
  // from it; one `train` does both.
  const expected = resolveConfig({
    preset: bench.preset,
    overrides: [...bench.warmStart.overrides, ...bench.overrides],
  });
  assert.deepEqual(read('smollm2-bandit.json'), expected);
});
