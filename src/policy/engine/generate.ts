/**
 * Batched generation: prefill the key/value cache (engine/prefill.ts: with a PrefixCache, only what each
 * row's cached prefix lacks), then one decode step per token. The cache is position-aligned (a row's token
 * at position p in slot p), so a row's numbers do not depend on the other rows of the batch or on how its
 * prompt was split between calls. Sampling runs here in TypeScript (temperature / top-k / top-p, one
 * seeded stream per row, so a row's tokens do not depend on its batch); greedy decoding (temperature 0)
 * reads the in-graph argmax instead and never copies the logits out, and plain sampling at temperature 1 (RL's
 * rollouts) reads the in-graph weights exp(logit − max), leaving TypeScript the sums and the draw.
 * Rows stop at a stop token or string; the batch runs until every row has stopped or hit maxNewTokens. Stopped
 * rows leave the batch: once the rows still writing fit a batch bucket half the size or less, they move to the
 * front of the cache and the steps after run the smaller program (a row's numbers do not depend on its batch).
 */
import { ConfigError } from '../../errors.ts';
import type { ModelConfig } from '../io/config.ts';
import { type DecodeShape, type ExtendShape, cacheName, stepName } from '../programs/generate.ts';
import { SamplingRng } from '../sampling/rng.ts';
import { drawFromWeights, type SamplingOptions, TokenSampler } from '../sampling/sampler.ts';
import { StopMatcher } from '../sampling/stop.ts';
import type { Tokenizer } from '../tokenizer/types.ts';
import { extendShape } from './extend.ts';
import type { BatchCache } from './kv-cache.ts';
import {
  type GenerationStats,
  type PrefillContext,
  batchBucket,
  emptyStats,
  prefill,
  sharePrefixes,
} from './prefill.ts';
import type { PrefixCache } from './prefix-cache.ts';
import type { GenerationPrograms } from './programs.ts';
import { type OrtTensor, floatTensor, int64Tensor } from './session.ts';

export { batchBucket } from './prefill.ts';

export interface GenerateRequest {
  readonly prompts: readonly (readonly number[])[];
  readonly maxNewTokens: number;
  /** temperature 0 = greedy (the default). */
  readonly sampling?: SamplingOptions;
  readonly seed?: number;
  /**
   * One sampling seed per prompt (overrides `seed`): a row's tokens then depend only on its own seed,
   * not on which other rows share the batch — so sharded rollouts sample exactly what one rollout would.
   */
  readonly rowSeeds?: readonly number[];
  /** Default: the config's eos_token_id(s). */
  readonly stopTokenIds?: readonly number[];
  /** Stop once the decoded continuation contains one of these (needs the policy's tokenizer). */
  readonly stopStrings?: readonly string[];
  /** Prompt lengths are padded up to a multiple of this (default 16) so prefill programs are reused. */
  readonly promptMultiple?: number;
  /**
   * Called with each token of each row as it is generated, stop tokens included (streaming). A function does not
   * cross the engine's worker boundary: PolicyEngine sends a flag and relays the worker's progress messages.
   */
  readonly onToken?: (row: number, token: number) => void;
}

export interface Generation {
  /** The generated tokens, including the stop token or the token completing a stop string. */
  readonly tokens: number[];
  /** log softmax(logits / T)[token] per generated token (T = 1 when greedy); see sampling/sampler.ts. */
  readonly logprobs: number[];
  /** Entropy of softmax(logits / T) per generated token: of the distribution each token was drawn from. */
  readonly entropies: number[];
  readonly finishReason: 'stop' | 'length';
  readonly stopString?: string;
}

const up = (x: number, m: number): number => Math.ceil(x / m) * m;

/** Per-row bookkeeping: what was generated and whether the row has stopped. */
class Rows {
  readonly out: {
    tokens: number[];
    logprobs: number[];
    entropies: number[];
    finishReason: 'stop' | 'length';
    stopString?: string;
    done: boolean;
  }[];
  private readonly stops: StopMatcher | null;
  constructor(
    n: number,
    private readonly maxNewTokens: number,
    private readonly stopIds: ReadonlySet<number>,
    stopStrings: readonly string[],
    tokenizer?: Tokenizer,
    private readonly onToken?: (row: number, token: number) => void,
  ) {
    this.out = Array.from({ length: n }, () => ({
      tokens: [],
      logprobs: [],
      entropies: [],
      finishReason: 'length' as const,
      done: false,
    }));
    const decode = (ids: readonly number[]) => tokenizer!.decode(ids);
    this.stops = stopStrings.length ? new StopMatcher({ stopStrings, batchSize: n, decode }) : null;
  }
  get allDone(): boolean {
    return this.out.every((r) => r.done);
  }
  /** Whether the row at a batch rank (-1: a rank no row holds) still writes. */
  writing(row: number): boolean {
    return row >= 0 && !this.out[row].done;
  }
  /** One step's picks, by batch rank: `order[i]` is the row at rank i (default: rank = row). */
  push(
    tokens: ArrayLike<number | bigint>,
    logprobs: ArrayLike<number>,
    entropies: ArrayLike<number>,
    order?: readonly number[],
  ): void {
    for (let i = 0; i < (order?.length ?? this.out.length); i++) {
      const b = order ? order[i] : i;
      if (!this.writing(b)) continue;
      const r = this.out[b];
      const t = Number(tokens[i]);
      r.tokens.push(t);
      this.onToken?.(b, t);
      r.logprobs.push(logprobs[i]);
      r.entropies.push(entropies[i]);
      const stop = this.stops?.push(b, t) ?? null;
      if (this.stopIds.has(t) || stop !== null) {
        Object.assign(r, { done: true, finishReason: 'stop', stopString: stop ?? undefined });
      } else if (r.tokens.length >= this.maxNewTokens) r.done = true;
    }
  }
}

/** What generate keeps between calls: the PrefixCache (null = prefill every prompt whole) and the token counts. */
export interface GenerationMemory {
  readonly store: PrefixCache | null;
  readonly stats: GenerationStats;
  /** Compute the prefixes rows share once, into the store (default true). */
  readonly share?: boolean;
}

export async function generate(
  programs: GenerationPrograms,
  params: Record<string, OrtTensor>,
  req: GenerateRequest,
  tokenizer?: Tokenizer,
  attentionBudget = Infinity,
  memory: GenerationMemory = { store: null, stats: emptyStats() },
): Promise<Generation[]> {
  const cfg = programs.layout.config;
  const n = req.prompts.length;
  if (n === 0 || req.prompts.some((p) => p.length === 0))
    throw new ConfigError('prompts', 'need at least one non-empty prompt');
  if (!(req.maxNewTokens >= 1)) throw new ConfigError('maxNewTokens', 'must be >= 1');
  if (req.stopStrings?.length && !tokenizer) throw new ConfigError('stopStrings', 'need a tokenizer on the policy');
  const B = batchBucket(n); // rows beyond n are one-token dummies, finished from the start
  const prompts = [...req.prompts, ...Array<number[]>(B - n).fill([0])];
  const S = cacheSlots(req);
  const ctx: PrefillContext = { programs, params, multiple: req.promptMultiple ?? 16, attentionBudget, ...memory };
  const t0 = performance.now();
  if (memory.share !== false) await sharePrefixes(ctx, req.prompts);
  const step = new Stepper(req, B, cfg.vocabSize);
  const { cache, out, starts } = await prefill(ctx, prompts, n, S, step.heads);
  countPrompts(memory.stats, req.prompts, starts);
  const t1 = performance.now();
  const rows = new Rows(
    B,
    req.maxNewTokens,
    new Set(req.stopTokenIds ?? cfg.eosTokenIds),
    req.stopStrings ?? [],
    tokenizer,
    req.onToken,
  );
  rows.out.slice(n).forEach((r) => (r.done = true));
  rows.push(...step.pick(out, [...Array(B).keys()], rows));
  await decode(programs, params, cache, prompts, rows, step, memory.stats);
  memory.stats.prefillSeconds += (t1 - t0) / 1000;
  memory.stats.decodeSeconds += (performance.now() - t1) / 1000;
  return rows.out.slice(0, n).map(({ done: _, ...g }) => g);
}

function countPrompts(
  stats: GenerationStats,
  prompts: readonly (readonly number[])[],
  starts: readonly number[],
): void {
  prompts.forEach((p, b) => {
    stats.prompt += p.length;
    stats.reused += starts[b];
    stats.prefilled += p.length - starts[b];
  });
}

/** Cache slots of a request: its longest prompt and maxNewTokens, rounded up to 32 (programs are reused). */
function cacheSlots(req: GenerateRequest): number {
  return up(Math.max(...req.prompts.map((p) => p.length)) + req.maxNewTokens, 32);
}

/** One decode step per token until every row is done; each step's keys and values go into the row's next slot. */
async function decode(
  programs: GenerationPrograms,
  params: Record<string, OrtTensor>,
  cache: BatchCache,
  prompts: readonly (readonly number[])[],
  rows: Rows,
  step: Stepper,
  stats: GenerationStats,
): Promise<void> {
  const S = cache.slots;
  const positions = prompts.map((p) => p.length - 1); // by rank: of the token fed next, once incremented
  const slotMask = new Float32Array(cache.batch * S);
  prompts.forEach((p, b) => slotMask.fill(1, b * S, b * S + p.length));
  let order = [...Array(cache.batch).keys()]; // the row at each rank of the batch, -1 for none
  let program = await decodeProgram(programs, params, cache.batch, S);
  while (!rows.allDone) {
    const writing = order.filter((b) => rows.writing(b)).length;
    if (!programs.fixedDecodeBatch && batchBucket(writing) <= program.batch / 2) {
      order = closeRanks(order, rows, cache, positions, slotMask);
      program = await decodeProgram(programs, params, order.length, S);
    }
    const B = program.batch;
    for (let i = 0; i < B; i++) positions[i]++;
    const tokens = order.map((b) => (rows.writing(b) ? rows.out[b].tokens.at(-1)! : 0));
    const feeds = {
      ...program.weights,
      ...cache.tensors(0, B),
      tokens: int64Tensor(tokens, [B, 1]),
      positions: int64Tensor(positions.slice(0, B), [B, 1]),
      slot_mask: floatTensor(slotMask.subarray(0, B * S), [B, S]),
    };
    const out = await program.session.run(feeds, {
      ...Object.fromEntries(step.heads.map((h) => [h, null])),
      ...program.steps,
    });
    cache.write(program.fresh, 1, 0, positions, program.ones);
    for (let i = 0; i < B; i++) slotMask[i * S + positions[i]] = 1; // later steps attend this one from the cache
    stats.decoded += B;
    rows.push(...step.pick(out, order, rows), order);
  }
}

/** The decode program of `batch` rows over `slots` slots, with the buffers its steps write. */
async function decodeProgram(
  programs: GenerationPrograms,
  params: Record<string, OrtTensor>,
  batch: number,
  slots: number,
) {
  const { numLayers: L, numKvHeads: K, headDim: E } = programs.layout.config;
  const session = await programs.decode({ batch, cacheLen: slots });
  const weights = Object.fromEntries(session.inputNames.filter((n) => n in params).map((n) => [n, params[n]]));
  const kinds = [...Array(L).keys()].flatMap((i) =>
    (['k', 'v'] as const).map((kind) => [cacheName(kind, i), stepName(kind, i)]),
  );
  const steps = Object.fromEntries(
    kinds.map(([, nm]) => [nm, floatTensor(new Float32Array(batch * K * E), [batch, K, 1, E])]),
  );
  const fresh = Object.fromEntries(kinds.map(([slot, nm]) => [slot, steps[nm].data as Float32Array]));
  return { batch, session, weights, steps, fresh, ones: new Array<number>(batch).fill(1) };
}

/**
 * The rows still writing move to the front ranks, in order, with their cached slots, positions and slot masks;
 * returns the new order over the smaller bucket (its last ranks keep what was there: finite numbers nobody reads).
 */
function closeRanks(
  order: readonly number[],
  rows: Rows,
  cache: BatchCache,
  positions: number[],
  slotMask: Float32Array,
): number[] {
  const S = cache.slots;
  const kept = order.flatMap((b, i) => (rows.writing(b) ? [i] : []));
  kept.forEach((from, to) => {
    if (from === to) return;
    cache.moveRow(from, to, positions[from] + 1);
    positions[to] = positions[from];
    slotMask.copyWithin(to * S, from * S, (from + 1) * S);
  });
  const next = Array<number>(batchBucket(kept.length)).fill(-1);
  kept.forEach((from, to) => (next[to] = order[from]));
  return next;
}

/**
 * The programs a request runs without a PrefixCache: the extend over whole prompts padded to a multiple of
 * promptMultiple, in row chunks whose attention scores (rows·H·N·S) fit the budget, and the decode step.
 */
export function generationShapes(
  cfg: ModelConfig,
  req: GenerateRequest,
  attentionBudget = Infinity,
): { extend: ExtendShape; decode: DecodeShape } {
  const B = batchBucket(req.prompts.length);
  const S = cacheSlots(req);
  const prompts = [...req.prompts, ...Array<number[]>(B - req.prompts.length).fill([0])];
  const rows = { prompts, starts: prompts.map(() => 0) };
  const { newLen, chunk } = extendShape(rows, cfg.numHeads, S, req.promptMultiple ?? 16, attentionBudget);
  return { extend: { batch: chunk, newLen, cacheLen: S }, decode: { batch: B, cacheLen: S } };
}

/** Sampling state and the head outputs each step fetches. */
class Stepper {
  private readonly sampler: TokenSampler;
  private readonly rngs: SamplingRng[];
  private readonly tokens: Int32Array;
  private readonly logprobs: Float32Array;
  private readonly entropies: Float32Array;
  private readonly options: SamplingOptions;
  constructor(req: GenerateRequest, B: number, V: number) {
    this.options = req.sampling ?? { temperature: 0 };
    this.sampler = new TokenSampler(V);
    this.rngs = Array.from({ length: B }, (_, b) =>
      req.rowSeeds ? SamplingRng.fromSeed(req.rowSeeds[b] ?? 0, 0) : SamplingRng.fromSeed(req.seed ?? 0, b),
    );
    this.tokens = new Int32Array(B);
    this.logprobs = new Float32Array(B);
    this.entropies = new Float32Array(B);
  }
  get greedy(): boolean {
    return this.options.temperature === 0;
  }
  /** Plain sampling at temperature 1: the program's weights are that distribution's, unnormalised. */
  private get fromWeights(): boolean {
    const { temperature, topK = 0, topP = 1 } = this.options;
    return temperature === 1 && topK === 0 && topP === 1;
  }
  /** The head outputs this mode needs. */
  get heads(): string[] {
    if (this.greedy) return ['greedy_token', 'greedy_logprob', 'greedy_entropy'];
    return this.fromWeights ? ['sample_weights', 'logits'] : ['logits'];
  }
  /** The step's tokens by rank; ranks not writing are not sampled (their rows are done: nothing reads them). */
  pick(
    out: Record<string, OrtTensor>,
    order: readonly number[],
    rows: Rows,
  ): [ArrayLike<number | bigint>, ArrayLike<number>, ArrayLike<number>] {
    const f32 = (name: string) => out[name].data as Float32Array;
    if (this.greedy) return [out.greedy_token.data as BigInt64Array, f32('greedy_logprob'), f32('greedy_entropy')];
    const logits = f32('logits');
    const V = logits.length / order.length;
    const weights = this.fromWeights ? f32('sample_weights') : null;
    for (let i = 0; i < order.length; i++) {
      const b = order[i];
      if (!rows.writing(b)) continue;
      if (weights) {
        const r = drawFromWeights(weights, logits, i * V, V, this.rngs[b]);
        [this.tokens[i], this.logprobs[i], this.entropies[i]] = [r.token, r.logProb, r.entropy];
      } else {
        const row = logits.subarray(i * V, (i + 1) * V);
        const [t, lp, e] = [
          this.tokens.subarray(i, i + 1),
          this.logprobs.subarray(i, i + 1),
          this.entropies.subarray(i, i + 1),
        ];
        this.sampler.sampleBatch(row, this.options, this.rngs[b], t, lp, e);
      }
    }
    return [this.tokens, this.logprobs, this.entropies];
  }
}
