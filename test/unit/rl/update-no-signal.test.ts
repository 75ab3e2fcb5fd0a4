/**
 * The update kernel both drivers call (updateKeptRows → updateStage) skips the actor step when no trained
 * token carries an advantage: entropy and KL alone must not move the policy (RAGEN-2 skips such steps).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Trainer } from '../../../src/policy/engine/handle.ts';
import { resolveConfig } from '../../../src/rl/config.ts';
import { updateKeptRows } from '../../../src/rl/stages/update.ts';
import { ACTOR_NO_SIGNAL } from '../../../src/rl/metric-names.ts';
import { type UpdateInput, hasAdvantageSignal } from '../../../src/rl/update.ts';

/** Two rows of four tokens, loss on the last two of each; `advantages` per token. */
function input(advantages: number[]): UpdateInput {
  return {
    tokens: {
      batch: 2,
      seqLen: 4,
      tokens: Int32Array.from([1, 2, 3, 4, 1, 2, 3, 4]),
      attentionMask: new Float32Array(8).fill(1),
      lossMask: Float32Array.from([0, 0, 1, 1, 0, 0, 1, 1]),
    },
    advantages: Float32Array.from(advantages),
    oldLogprobs: new Float32Array(8),
  };
}

function countingTrainer(): Trainer & { calls: number } {
  const t = {
    calls: 0,
    trainStep: async () => {
      t.calls++;
      return { grad_norm: 1, skipped: 0, tokens: 4 };
    },
  };
  return t as unknown as Trainer & { calls: number };
}

const config = resolveConfig({ overrides: ['miniBatchSize=2', 'critic=false', 'advantage=grpo', 'filter=none'] });

test('an update whose trained advantages are all zero does not step the actor, and says so', async () => {
  const actor = countingTrainer();
  // A non-zero advantage on a prompt token (loss mask 0) is not a signal either.
  const metrics = await updateKeptRows(config, 1, input([5, 0, 0, 0, 0, 0, 0, 0]), { actor, critic: null });
  assert.equal(actor.calls, 0);
  assert.equal(metrics[ACTOR_NO_SIGNAL], 1);
});

test('one trained token with an advantage is enough for the actor to step', async () => {
  const actor = countingTrainer();
  const metrics = await updateKeptRows(config, 1, input([0, 0, 0, 0, 0, 0, 0, -0.5]), { actor, critic: null });
  assert.equal(actor.calls, 1);
  assert.equal(metrics[ACTOR_NO_SIGNAL], 0);
});

test('skipNoSignal=false keeps the old behaviour: the step runs on entropy and KL alone', async () => {
  const actor = countingTrainer();
  const c = resolveConfig({ overrides: ['miniBatchSize=2', 'critic=false', 'advantage=grpo', 'skipNoSignal=false'] });
  await updateKeptRows(c, 1, input(new Array(8).fill(0)), { actor, critic: null });
  assert.equal(actor.calls, 1);
});

test('hasAdvantageSignal reads only loss-masked tokens', () => {
  const signal = (i: UpdateInput) => hasAdvantageSignal(i.tokens.lossMask, i.advantages);
  assert.equal(signal(input([1, 1, 0, 0, 1, 1, 0, 0])), false);
  assert.equal(signal(input([0, 0, 0, 1e-9, 0, 0, 0, 0])), true);
});
