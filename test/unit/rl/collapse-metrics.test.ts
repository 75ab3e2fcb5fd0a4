import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { collapseMetrics, type CollapseProbe } from '../../../src/rl/collapse-metrics.ts';

/** Written by scripts/collapse_metrics_reference.py, which mirrors RAGEN-2's collapse_metrics.py. */
const FIXTURE = JSON.parse(
  readFileSync(new URL('../../fixtures/rl/collapse-metrics.json', import.meta.url), 'utf8'),
) as {
  probe: CollapseProbe;
  metrics: Record<string, number>;
};

test("the collapse metrics equal RAGEN-2's definitions on the reference case (relative 1e-12)", () => {
  const mine = collapseMetrics(FIXTURE.probe);
  assert.deepEqual(Object.keys(mine).sort(), Object.keys(FIXTURE.metrics).sort());
  for (const [name, expected] of Object.entries(FIXTURE.metrics)) {
    assert.ok(
      Math.abs(mine[name] - expected) <= 1e-12 * Math.max(1, Math.abs(expected)),
      `${name}: ${mine[name]} vs ${expected}`,
    );
  }
  assert.equal(mine['collapse/retrieval_accuracy'], 0.8);
});

test('responses that ignore the prompt give MI 0 and retrieval at chance', () => {
  const same = [-1, -1, -2, -2];
  const probe: CollapseProbe = {
    rows: 2,
    columns: 2,
    meanLogProb: same,
    sumLogProb: same,
    columnOfRow: [0, 1],
    columnSignature: [0, 1],
    firstTurnTotal: 2,
    firstTurnValid: 2,
  };
  const m = collapseMetrics(probe);
  assert.equal(m['collapse/mi_estimate'], 0);
  assert.equal(m['collapse/retrieval_accuracy'], 0.5); // ties go to the first column
  assert.equal(m['collapse/retrieval_chance_level'], 0.5);
});

test('fewer than two prompts give only the first-turn counts', () => {
  const probe: CollapseProbe = {
    rows: 1,
    columns: 1,
    meanLogProb: [-1],
    sumLogProb: [-1],
    columnOfRow: [0],
    columnSignature: [0],
    firstTurnTotal: 4,
    firstTurnValid: 1,
  };
  assert.deepEqual(collapseMetrics(probe), {
    'collapse/first_turn_num_total': 4,
    'collapse/first_turn_num_valid': 1,
    'collapse/first_turn_valid_rate': 0.25,
  });
});
