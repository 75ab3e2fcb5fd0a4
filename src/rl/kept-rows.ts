/**
 * The rows an iteration trains (those of the groups the filter keeps), cut from the assembled batch the one
 * way the score, advantage and update stages of both drivers cut them. Scores and advantages of the kept rows
 * are [rows, T] arrays in the order of `rows`.
 */
import type { TrainBatch } from '../policy/programs/batch.ts';
import type { AdvantageOutput } from './advantages.ts';
import type { AssembledBatch } from './assemble.ts';
import { type Batch, selectRows, takeRows } from './batch.ts';
import type { UpdateInput } from './update.ts';

export interface KeptRows {
  /** Indices into the assembled batch, ascending. */
  readonly rows: readonly number[];
  readonly batch: Batch;
  /** Tokens, attention and loss masks of the kept rows. */
  readonly tokens: TrainBatch;
  /** The rollout's sampling log-probs of the kept rows. */
  readonly behaviour: Float32Array;
}

/**
 * Per-token [rows, T] model outputs for the trained rows (in the order of `trainedRows`), aligned with their tokens.
 */
export interface ScoredBatch {
  /** Old log-probs: recomputed by the actor, or the rollout's sampling log-probs (oldLogprobs = behaviour). */
  logprobs: Float32Array;
  values?: Float32Array;
  refLogprobs?: Float32Array;
  /** logprobs/behaviour_gap_* when recomputed. */
  metrics: Record<string, number>;
}

export function keepRows(all: AssembledBatch, rows: readonly number[]): KeptRows {
  const batch = selectRows(all.batch, rows);
  const behaviour = takeRows(all.samplingLogprobs, all.batch.T, rows);
  return { rows, batch, tokens: takeTokenRows(all.tokens, rows, batch.lossMask), behaviour };
}

/** The rows `rows` of a token batch, with every per-token array cut the same way. */
export function takeTokenRows(tokens: TrainBatch, rows: readonly number[], lossMask: Float32Array): TrainBatch {
  const T = tokens.seqLen;
  return {
    ...tokens,
    batch: rows.length,
    tokens: Int32Array.from(takeRows(tokens.tokens, T, rows)),
    attentionMask: takeRows(tokens.attentionMask, T, rows),
    lossMask,
  };
}

/** What the update trains on: the kept rows' tokens, their scores (already the kept rows') and advantages. */
export function updateInputOf(
  kept: KeptRows,
  scored: ScoredBatch,
  adv: Pick<AdvantageOutput, 'advantages'> & { returns?: Float32Array | null },
): UpdateInput {
  return {
    tokens: kept.tokens,
    advantages: adv.advantages,
    oldLogprobs: scored.logprobs,
    refLogprobs: scored.refLogprobs,
    returns: adv.returns ?? undefined,
    oldValues: scored.values,
  };
}
