/**
 * RAGEN-2's collapse metrics (ragen/trainer/collapse_metrics.py, CollapseDetector): do the model's
 * first-turn responses still depend on the input? For sampled pairs (x_i, z_i) — z_i the response to
 * prompt x_i — and every distinct prompt x_j of the batch, ℓ_j(z_i) = log p(z_i | x_j) under the current
 * policy, per token (mean over z's tokens) and per sequence (sum). With matched_i = ℓ_{col(i)}(z_i) and
 * marginal_i = logsumexp_j ℓ_j(z_i) − log N (the uniform mixture over the N prompts):
 *   mi_estimate         = mean(matched) − mean(marginal)          Î(X;Z); high = healthy, → 0 = template collapse
 *   mi_upper_bound      = log N
 *   mi_seq_estimate     = the same with per-sequence sums
 *   retrieval_accuracy  = share of i whose best-scoring prompt (argmax_j ℓ_j(z_i), first on ties) has the same
 *                         signature (token sequence) as x_i's; chance_level = mean_i (#columns with x_i's
 *                         signature)/N; @k: any of the k best (k_eff = min(k, 8, N)), chance min(1, chance·k_eff)
 *   conditional_entropy_est = −mean(matched), reasoning_entropy_est = −mean(marginal) (and *_seq_est)
 *   marginal_std(_seq)  = population std of marginal; mi_zscore(_seq) = mean((matched − marginal)/(std + 1e-3))
 * RAGEN-2's EMA-normalised z-scores carry state across steps and are not reported. Pure: the probe holds
 * the matrices, so replay recomputes every metric from the event log.
 */
import type { CollapseProbe } from '../events/types.ts';
import {
  COLLAPSE_MI_ESTIMATE,
  COLLAPSE_MI_UPPER_BOUND,
  COLLAPSE_RETRIEVAL_ACCURACY,
  COLLAPSE_RETRIEVAL_CHANCE_LEVEL,
} from './metric-names.ts';

export type { CollapseProbe } from '../events/types.ts';

const STD_EPS = 1e-3;
const K_VALUES = [2, 4, 8] as const;

const meanOf = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

function logSumExp(xs: readonly number[]): number {
  const max = Math.max(...xs);
  if (!Number.isFinite(max)) return max;
  return max + Math.log(xs.reduce((a, x) => a + Math.exp(x - max), 0));
}

function populationStd(xs: readonly number[]): number {
  const m = meanOf(xs);
  return Math.sqrt(meanOf(xs.map((x) => (x - m) ** 2)));
}

/** matched and marginal per row of one matrix. */
function logProbStats(matrix: readonly number[], p: CollapseProbe): { matched: number[]; marginal: number[] } {
  const matched: number[] = [];
  const marginal: number[] = [];
  for (let i = 0; i < p.rows; i++) {
    const row = matrix.slice(i * p.columns, (i + 1) * p.columns);
    matched.push(row[p.columnOfRow[i]] as number);
    marginal.push(logSumExp(row) - Math.log(p.columns));
  }
  return { matched, marginal };
}

/** Columns of one row, best first; ties keep the lower column first (torch.argmax's rule). */
function ranked(row: readonly number[]): number[] {
  return row.map((_, j) => j).sort((a, b) => (row[b] as number) - (row[a] as number) || a - b);
}

function retrieval(p: CollapseProbe): Record<string, number> {
  const sig = p.columnSignature;
  const counts = new Map<number, number>();
  for (const s of sig) counts.set(s, (counts.get(s) ?? 0) + 1);
  const kMax = Math.min(8, p.columns);
  const hits = K_VALUES.map(() => 0);
  let correct = 0;
  let chance = 0;
  for (let i = 0; i < p.rows; i++) {
    const order = ranked(p.meanLogProb.slice(i * p.columns, (i + 1) * p.columns));
    const truth = sig[p.columnOfRow[i] as number] as number;
    if (sig[order[0] as number] === truth) correct++;
    chance += (counts.get(truth) as number) / p.columns;
    K_VALUES.forEach((k, n) => {
      if (order.slice(0, Math.min(k, kMax)).some((j) => sig[j] === truth)) hits[n]++;
    });
  }
  const accuracy = correct / p.rows;
  const chanceLevel = chance / p.rows;
  const out: Record<string, number> = {};
  K_VALUES.forEach((k, n) => {
    const chanceK = Math.min(1, chanceLevel * Math.min(k, kMax));
    out[`collapse/retrieval_accuracy@${k}`] = (hits[n] as number) / p.rows;
    out[`collapse/retrieval_chance_level@${k}`] = chanceK;
    out[`collapse/retrieval_above_chance@${k}`] = (hits[n] as number) / p.rows - chanceK;
  });
  return {
    ...out,
    [COLLAPSE_RETRIEVAL_ACCURACY]: accuracy,
    [COLLAPSE_RETRIEVAL_CHANCE_LEVEL]: chanceLevel,
    'collapse/retrieval_above_chance': accuracy - chanceLevel,
  };
}

const zscore = (matched: readonly number[], marginal: readonly number[], std: number): number =>
  meanOf(matched.map((m, i) => (m - (marginal[i] as number)) / (std + STD_EPS)));

export function collapseMetrics(p: CollapseProbe): Record<string, number> {
  const counts = {
    'collapse/first_turn_num_total': p.firstTurnTotal,
    'collapse/first_turn_num_valid': p.firstTurnValid,
    'collapse/first_turn_valid_rate': p.firstTurnTotal > 0 ? p.firstTurnValid / p.firstTurnTotal : 0,
  };
  if (p.columns < 2 || p.rows === 0) return counts;
  const tok = logProbStats(p.meanLogProb, p);
  const seq = logProbStats(p.sumLogProb, p);
  const [matched, marginal] = [meanOf(tok.matched), meanOf(tok.marginal)];
  const [matchedSeq, marginalSeq] = [meanOf(seq.matched), meanOf(seq.marginal)];
  const std = populationStd(tok.marginal);
  const stdSeq = populationStd(seq.marginal);
  return {
    ...counts,
    [COLLAPSE_MI_ESTIMATE]: matched - marginal,
    [COLLAPSE_MI_UPPER_BOUND]: Math.log(p.columns),
    'collapse/matched_log_prob_mean': matched,
    'collapse/marginal_log_prob_mean': marginal,
    'collapse/mi_seq_estimate': meanOf(seq.matched.map((m, i) => m - (seq.marginal[i] as number))),
    ...retrieval(p),
    'collapse/conditional_entropy_est': -matched,
    'collapse/reasoning_entropy_est': -marginal,
    'collapse/conditional_entropy_seq_est': -matchedSeq,
    'collapse/reasoning_entropy_seq_est': -marginalSeq,
    'collapse/marginal_std': std,
    'collapse/marginal_std_seq': stdSeq,
    'collapse/mi_zscore': zscore(tok.matched, tok.marginal, std),
    'collapse/mi_zscore_seq': zscore(seq.matched, seq.marginal, stdSeq),
  };
}
