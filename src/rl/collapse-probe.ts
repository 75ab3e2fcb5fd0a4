/**
 * The data RAGEN-2's collapse metrics are computed from (collapse-metrics.ts): sampled first-turn pairs
 * (x, z) of the iteration's rollouts and the policy's log-probabilities of every z after every distinct x.
 * Both drivers call it from the score stage, with the actor that played the rollouts (policy i − 1).
 *
 * As in RAGEN-2: a pair per trajectory with a non-empty first response; up to `collapseSamples` of them
 * drawn without replacement (here from a seeded stream, so the choice replays); the columns are the
 * distinct groups among the sampled pairs in ascending order, each represented by its first sampled
 * pair's prompt; prompts with equal tokens share a signature. It runs at iteration 1 and every
 * `collapseEvery`-th iteration. Two deliberate differences, both because starpo's rollouts are
 * token-in/token-out and its small models answer without a think block:
 * - x is the exact token prefix the model saw before its first response, and z is every token the model
 *   wrote in that response (RAGEN-2 re-tokenises the text inside <think>…</think> after prompt + "<think>");
 * - a prompt longer than the model's context minus z loses its first tokens (RAGEN-2's models never run out).
 */
import { roleCode } from '../agent/chat-format.ts';
import { Prng } from '../envs/prng.ts';
import type { SequenceBatch } from '../policy/programs/batch.ts';
import type { ScoreResult } from '../policy/engine/handle.ts';
import type { CollapseProbe } from './collapse-metrics.ts';
import type { RlConfig } from './config.ts';
import type { Trajectory } from './rollout.ts';

const ASSISTANT = roleCode('assistant');
/** The sampling stream of the pair choice (apart from the rollouts' own streams of the same seed). */
const PROBE_STREAM = 0xc011;

export interface Scorer {
  score(batch: SequenceBatch, temperature?: number): Promise<ScoreResult>;
}

interface FirstTurn {
  group: number;
  prompt: number[];
  response: number[];
}

export const collapseDue = (c: Pick<RlConfig, 'collapseEvery'>, iteration: number): boolean =>
  c.collapseEvery > 0 && (iteration === 1 || iteration % c.collapseEvery === 0);

function firstTurn(t: Trajectory): FirstTurn {
  const start = t.roles.indexOf(ASSISTANT);
  if (start < 0) return { group: t.group, prompt: [], response: [] };
  let end = start;
  while (end < t.roles.length && t.roles[end] === ASSISTANT) end++;
  return { group: t.group, prompt: t.ids.slice(0, start), response: t.ids.slice(start, end) };
}

function samplePairs(c: RlConfig, valid: readonly FirstTurn[], seed: number): FirstTurn[] {
  if (c.collapseSamples === 0 || c.collapseSamples >= valid.length) return [...valid];
  const order = new Prng(seed, PROBE_STREAM).shuffled(valid.map((_, i) => i));
  return order
    .slice(0, c.collapseSamples)
    .sort((a, b) => a - b)
    .map((i) => valid[i] as FirstTurn);
}

/** Rows (pair i, column j) as one right-padded batch: the column's prompt (cut to fit), then z_i. */
function crossBatch(pairs: readonly FirstTurn[], prompts: readonly number[][], context: number) {
  const rows: { tokens: number[]; from: number; length: number }[] = [];
  for (const p of pairs) {
    for (const x of prompts) {
      const prompt = x.slice(Math.max(0, x.length + p.response.length - context));
      rows.push({ tokens: [...prompt, ...p.response], from: prompt.length, length: p.response.length });
    }
  }
  const seqLen = Math.max(2, ...rows.map((r) => r.tokens.length));
  const tokens = new Int32Array(rows.length * seqLen);
  const attentionMask = new Float32Array(rows.length * seqLen);
  // The response's log-probs are all the probe reads; the mask also stops a packed prefix at the prompt, so a
  // prompt's rows pack as one family whatever their answers share (prefix-pack.ts).
  const headMask = new Float32Array(rows.length * seqLen);
  rows.forEach((r, b) => {
    tokens.set(r.tokens, b * seqLen);
    attentionMask.fill(1, b * seqLen, b * seqLen + r.tokens.length);
    headMask.fill(1, b * seqLen + r.from, b * seqLen + r.from + r.length);
  });
  return { batch: { batch: rows.length, seqLen, tokens, attentionMask, headMask }, rows };
}

/** The iteration's probe, or null when it is not due. `seed`: the iteration's sampling seed. */
export async function collapseProbe(
  c: RlConfig,
  iteration: number,
  trajectories: readonly Trajectory[],
  actor: Scorer,
  seed: number,
): Promise<CollapseProbe | null> {
  if (!collapseDue(c, iteration)) return null;
  const valid = trajectories.map(firstTurn).filter((p) => p.response.length > 0);
  const pairs = samplePairs(c, valid, seed);
  const groups = [...new Set(pairs.map((p) => p.group))].sort((a, b) => a - b);
  const counts = { firstTurnTotal: trajectories.length, firstTurnValid: valid.length };
  const empty = { rows: 0, columns: 0, meanLogProb: [], sumLogProb: [], columnOfRow: [], columnSignature: [] };
  if (groups.length < 2) return { ...empty, ...counts };
  const prompts = groups.map((g) => (pairs.find((p) => p.group === g) as FirstTurn).prompt);
  const signatures = new Map<string, number>();
  const columnSignature = prompts.map((x) => {
    const key = x.join(',');
    if (!signatures.has(key)) signatures.set(key, signatures.size);
    return signatures.get(key) as number;
  });
  const { batch, rows } = crossBatch(pairs, prompts, c.modelContext);
  const { logprobs } = await actor.score(batch, c.trainTemperature);
  const sumLogProb = rows.map((r, b) => {
    let sum = 0;
    for (let t = r.from; t < r.from + r.length; t++) sum += (logprobs as Float32Array)[b * batch.seqLen + t] as number;
    return sum;
  });
  return {
    rows: pairs.length,
    columns: groups.length,
    sumLogProb,
    ...counts,
    columnSignature,
    meanLogProb: sumLogProb.map((s, b) => s / Math.max(1, (rows[b] as { length: number }).length)),
    columnOfRow: pairs.map((p) => groups.indexOf(p.group)),
  };
}
