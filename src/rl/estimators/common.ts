/**
 * Shared pieces of the advantage estimators: the input/output types, per-trajectory outcome scores,
 * broadcasting a per-trajectory scalar over its assistant tokens, and group centring.
 */
import { type Batch, assertTokenShape, type Groups } from '../batch.ts';
import { allEqual, mean, sampleStd } from '../stats.ts';

export interface AdvantageParams {
  /** Token-level discount of GAE and REINFORCE++ (published StarPO: 1). */
  readonly gamma: number;
  /** GAE λ (published StarPO: 1). */
  readonly lambda: number;
  /** GRPO/GiGPO: divide the centred score by (group std + eps). false = Dr.GRPO (centre only). */
  readonly normByStd: boolean;
  /** GiGPO: per-turn discount of the step return (0.95). */
  readonly stepGamma: number;
  /** GiGPO: weight ω of the step advantage (1). */
  readonly omega: number;
  /** GiGPO: the paper's Eq. 3 form (default) or verl-agent's trainer semantics (estimators/gigpo.ts). */
  readonly gigpoForm?: 'paper' | 'verl-agent';
}

export interface AdvantageInput {
  readonly batch: Batch;
  /** [B, T] from placeRewards; non-zero only on masked (assistant) tokens. */
  readonly tokenRewards: Float32Array;
  /** [B, T] critic values; required by gae, ignored by the critic-free estimators. */
  readonly values?: Float32Array;
  readonly params: AdvantageParams;
}

export interface AdvantageOutput {
  /** [B, T] advantages, 0 on unmasked tokens. */
  readonly advantages: Float32Array;
  /** [B, T] value targets for the critic (gae only; null for critic-free estimators). */
  readonly returns: Float32Array | null;
  readonly metrics: Record<string, number>;
}

export type AdvantageFn = (input: AdvantageInput) => AdvantageOutput;

/** Added to a group std before dividing (GRPO, GiGPO), as published. */
export const STD_EPS = 1e-6;

/** Per-trajectory outcome score: the sum of its token rewards (= its return under either placement). */
export function rowScores(batch: Batch, tokenRewards: Float32Array): number[] {
  assertTokenShape('tokenRewards', tokenRewards, batch.B, batch.T);
  const scores: number[] = [];
  for (let b = 0; b < batch.B; b++) {
    let s = 0;
    for (let c = 0; c < batch.T; c++) s += tokenRewards[b * batch.T + c];
    scores.push(s);
  }
  return scores;
}

/** [B, T] with scores[b] on every masked token of row b. */
export function broadcastRows(batch: Batch, scores: readonly number[]): Float32Array {
  const out = new Float32Array(batch.B * batch.T);
  for (let i = 0; i < out.length; i++) if (batch.lossMask[i] !== 0) out[i] = scores[Math.floor(i / batch.T)];
  return out;
}

/**
 * Score minus its group's mean, optionally ÷ (sample std + STD_EPS). A group of one carries no
 * baseline information, so its member gets 0 (veRL would pass the raw score through instead);
 * a group of identical scores gets exactly 0.
 */
export function centreInGroups(scores: readonly number[], groups: Groups, normByStd: boolean): number[] {
  const out = new Array<number>(scores.length).fill(0);
  for (const rows of groups.rows) {
    const vals = rows.map((r) => scores[r]);
    // Identical scores give exactly 0 (their float mean may differ from them by an ulp).
    if (rows.length < 2 || allEqual(vals)) continue;
    const m = mean(vals);
    const scale = normByStd ? 1 / (sampleStd(vals) + STD_EPS) : 1;
    for (const r of rows) out[r] = (scores[r] - m) * scale;
  }
  return out;
}
