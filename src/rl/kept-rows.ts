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

/**
 * The rows `rows` of a token batch, with every per-token array cut the same way, and attention ending at each row's
 * last trained token (endAtLastTrained).
 */
export function takeTokenRows(tokens: TrainBatch, rows: readonly number[], lossMask: Float32Array): TrainBatch {
  const T = tokens.seqLen;
  return {
    ...tokens,
    batch: rows.length,
    tokens: Int32Array.from(takeRows(tokens.tokens, T, rows)),
    attentionMask: endAtLastTrained(takeRows(tokens.attentionMask, T, rows), lossMask, T),
    lossMask,
  };
}

/**
 * The attention mask with each row's tokens after its last trained one masked out (in place; returned). Attention is
 * causal, so what follows a row's last trained token (the environment's last observation, the template's closing
 * tokens) reaches none of the log-probs, values or loss terms on trained tokens; scored and trained it was work for
 * nothing: on Bandit 15 of a member's 40 tokens after the shared prompt. A row with no trained token is left whole.
 */
export function endAtLastTrained(attentionMask: Float32Array, lossMask: Float32Array, T: number): Float32Array {
  for (let b = 0; b * T < attentionMask.length; b++) {
    const last = lossMask.subarray(b * T, (b + 1) * T).findLastIndex((x) => x !== 0);
    if (last >= 0) attentionMask.fill(0, b * T + last + 1, (b + 1) * T);
  }
  return attentionMask;
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
