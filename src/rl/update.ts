/**
 * The update stage: critic first, then actor (docs/spec.md §4), each over `ppoEpochs` passes of seeded
 * mini-batches of `miniBatchSize` trajectories. Each mini-batch is cut to its own longest row so
 * short trajectories do not pay for long ones. Returns the mean of every train-step metric, and
 * actor/no_signal: 1 when the actor step was skipped because no trained token had an advantage.
 */
import type { RlConfig } from './config.ts';
import { takeRows } from './batch.ts';
import { Prng } from '../envs/prng.ts';
import type { Trainer } from '../policy/engine/handle.ts';
import type { AdamWSpec } from '../policy/programs/adamw.ts';
import type { TrainBatch } from '../policy/programs/batch.ts';
import type { LossSpec } from '../policy/programs/loss.ts';
import { ACTOR_NO_SIGNAL, modelMetric } from './metric-names.ts';

/** Everything the update reads, per token [B, T], for the rows being trained. */
export interface UpdateInput {
  tokens: TrainBatch;
  advantages: Float32Array;
  oldLogprobs: Float32Array;
  refLogprobs?: Float32Array;
  returns?: Float32Array;
  oldValues?: Float32Array;
}

export function actorLoss(c: RlConfig): LossSpec {
  return {
    kind: 'ppo',
    clipLow: c.clipLow,
    clipHigh: c.clipHigh,
    dualClip: c.dualClip > 0 ? c.dualClip : null,
    entropyCoef: c.entropyCoef,
    kl: c.klCoef > 0 ? { coef: c.klCoef, estimator: c.klEstimator } : null,
    aggregation: c.lossAggregation,
  };
}

export function adamwSpec(c: RlConfig): AdamWSpec {
  return {
    beta1: c.adamBeta1,
    beta2: c.adamBeta2,
    eps: c.adamEps,
    weightDecay: c.weightDecay,
    maxGradNorm: c.gradClip,
  };
}

/** Mini-batches of row indices: a seeded shuffle per epoch, then consecutive slices. */
export function miniBatches(rows: number, size: number, epochs: number, seed: number): number[][] {
  const out: number[][] = [];
  const rng = new Prng(seed);
  for (let e = 0; e < epochs; e++) {
    const order = Array.from({ length: rows }, (_, i) => i);
    for (let i = rows - 1; i > 0; i--) {
      const j = rng.int(i + 1);
      [order[i], order[j]] = [order[j], order[i]];
    }
    for (let s = 0; s < rows; s += size) out.push(order.slice(s, s + size));
  }
  return out;
}

function slice(input: UpdateInput, rows: readonly number[]): TrainBatch {
  const { tokens } = input;
  const T = tokens.seqLen;
  // Right padding: a row's real tokens end at its last attended position.
  const rowLength = (r: number) => tokens.attentionMask.subarray(r * T, (r + 1) * T).lastIndexOf(1) + 1;
  const len = Math.max(2, ...rows.map(rowLength));
  const cut = (xs: ArrayLike<number>) => takeRows(xs, T, rows, len);
  const opt = (xs?: Float32Array) => (xs ? cut(xs) : undefined);
  return {
    batch: rows.length,
    seqLen: len,
    tokens: Int32Array.from(cut(tokens.tokens)),
    attentionMask: cut(tokens.attentionMask),
    lossMask: cut(tokens.lossMask),
    advantages: cut(input.advantages),
    oldLogprobs: cut(input.oldLogprobs),
    refLogprobs: opt(input.refLogprobs),
    returns: opt(input.returns),
    oldValues: opt(input.oldValues),
  };
}

function meanMetrics(all: Record<string, number>[], model: 'actor' | 'critic'): Record<string, number> {
  const sums: Record<string, number> = {};
  for (const m of all) for (const [k, v] of Object.entries(m)) sums[k] = (sums[k] ?? 0) + v;
  const meanOf = (k: string, v: number) => (k === 'skipped' ? v : v / all.length);
  return Object.fromEntries(Object.entries(sums).map(([k, v]) => [modelMetric(model, k), meanOf(k, v)]));
}

/**
 * Whether any trained token carries a non-zero advantage. Without one, an actor step would be driven by the
 * entropy bonus and the KL term alone — it moves the policy with no reward signal (a model whose every answer
 * earns the same penalty drifts into free text), so the actor skips the step, as RAGEN-2 does.
 */
export function hasAdvantageSignal(lossMask: Float32Array, advantages: Float32Array): boolean {
  for (let i = 0; i < lossMask.length; i++) if (lossMask[i] !== 0 && advantages[i] !== 0) return true;
  return false;
}

export async function updateStage(
  input: UpdateInput,
  models: { actor: Trainer; critic: Trainer | null },
  c: RlConfig,
  seed: number,
): Promise<Record<string, number>> {
  const batches = miniBatches(input.tokens.batch, c.miniBatchSize, c.ppoEpochs, seed);
  const metrics: Record<string, number> = {};
  if (models.critic) {
    const steps = [];
    for (const rows of batches) {
      steps.push(
        await models.critic.trainStep(slice(input, rows), {
          loss: { kind: 'value', clip: c.valueClip, aggregation: c.lossAggregation },
          lr: c.lrCritic,
          optim: adamwSpec(c),
        }),
      );
    }
    Object.assign(metrics, meanMetrics(steps, 'critic'));
  }
  if (c.skipNoSignal && !hasAdvantageSignal(input.tokens.lossMask, input.advantages))
    return { ...metrics, [ACTOR_NO_SIGNAL]: 1 };
  const steps = [];
  for (const rows of batches) {
    steps.push(
      await models.actor.trainStep(slice(input, rows), {
        loss: actorLoss(c),
        lr: c.lrActor,
        optim: adamwSpec(c),
        temperature: c.trainTemperature,
      }),
    );
  }
  return { ...metrics, ...meanMetrics(steps, 'actor'), [ACTOR_NO_SIGNAL]: 0 };
}
