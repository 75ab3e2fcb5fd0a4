/**
 * Batched generation: left-pad the prompts, prefill the key/value cache, then one decode step per
 * token. Sampling runs here in TypeScript (temperature / top-k / top-p, one seeded stream per
 * row, so a row's tokens do not depend on its batch); greedy decoding (temperature 0) reads the
 * in-graph argmax instead and never copies the logits out. Rows stop at a stop token or string;
 * the batch runs until every row has stopped or hit maxNewTokens.
 */
import { ConfigError } from '../../errors.ts';
import type { ModelConfig } from '../io/config.ts';
import { type DecodeShape, type PrefillShape, cacheName, stepName } from '../programs/generate.ts';
import { positionsOf } from '../programs/batch.ts';
import { SamplingRng } from '../sampling/rng.ts';
import { type SamplingOptions, TokenSampler } from '../sampling/sampler.ts';
import { StopMatcher } from '../sampling/stop.ts';
import type { Tokenizer } from '../tokenizer/types.ts';
import type { ProgramCache } from './programs.ts';
import { type Tensor, floatTensor, int64Tensor, tensor } from './session.ts';

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
}

export interface Generation {
  /** The generated tokens, including the stop token or the token completing a stop string. */
  readonly tokens: number[];
  /** log softmax(logits / T)[token] per generated token (T = 1 when greedy); see sampling/sampler.ts. */
  readonly logprobs: number[];
  readonly finishReason: 'stop' | 'length';
  readonly stopString?: string;
}

const up = (x: number, m: number): number => Math.ceil(x / m) * m;

/** Per-row bookkeeping: what was generated and whether the row has stopped. */
class Rows {
  readonly out: { tokens: number[]; logprobs: number[]; finishReason: 'stop' | 'length'; stopString?: string; done: boolean }[];
  private readonly stops: StopMatcher | null;
  constructor(
    n: number,
    private readonly maxNewTokens: number,
    private readonly stopIds: ReadonlySet<number>,
    stopStrings: readonly string[],
    tokenizer?: Tokenizer,
  ) {
    this.out = Array.from({ length: n }, () => ({ tokens: [], logprobs: [], finishReason: 'length' as const, done: false }));
    const decode = (ids: readonly number[]) => tokenizer!.decode(ids);
    this.stops = stopStrings.length ? new StopMatcher({ stopStrings, batchSize: n, decode }) : null;
  }
  get allDone(): boolean {
    return this.out.every((r) => r.done);
  }
  push(tokens: ArrayLike<number | bigint>, logprobs: ArrayLike<number>): void {
    this.out.forEach((r, b) => {
      if (r.done) return;
      const t = Number(tokens[b]);
      r.tokens.push(t);
      r.logprobs.push(logprobs[b]);
      const stop = this.stops?.push(b, t) ?? null;
      if (this.stopIds.has(t) || stop !== null) {
        Object.assign(r, { done: true, finishReason: 'stop', stopString: stop ?? undefined });
      }
      else if (r.tokens.length >= this.maxNewTokens) r.done = true;
    });
  }
}

export async function generate(
  programs: ProgramCache,
  params: Record<string, Tensor>,
  req: GenerateRequest,
  tokenizer?: Tokenizer,
  attentionBudget = Infinity,
): Promise<Generation[]> {
  const cfg = programs.layout.config;
  const n = req.prompts.length;
  if (n === 0 || req.prompts.some((p) => p.length === 0)) throw new ConfigError('prompts', 'need at least one non-empty prompt');
  if (!(req.maxNewTokens >= 1)) throw new ConfigError('maxNewTokens', 'must be >= 1');
  if (req.stopStrings?.length && !tokenizer) throw new ConfigError('stopStrings', 'need a tokenizer on the policy');
  const { prefill: prefillShape, decode: decodeShape } = generationShapes(cfg, req, attentionBudget);
  const [T, S, B] = [prefillShape.promptLen, decodeShape.cacheLen, decodeShape.batch]; // rows beyond n are one-token dummies, finished from the start
  const rows = new Rows(B, req.maxNewTokens, new Set(req.stopTokenIds ?? cfg.eosTokenIds), req.stopStrings ?? [], tokenizer);
  rows.out.slice(n).forEach((r) => (r.done = true));
  const step = new Stepper(req, B, cfg.vocabSize);
  const prompts = [...req.prompts, ...Array<number[]>(B - n).fill([0])];
  const { lastPos, slotMask } = promptFeeds(prompts, T, S);
  let { out, caches } = await prefill(programs, params, prompts, prefillShape, step);
  rows.push(...step.pick(out));
  const decode = await programs.decode(decodeShape);
  const { numLayers: L, numKvHeads: K, headDim: E } = cfg;
  const steps = Object.fromEntries([...Array(L).keys()].flatMap((i) => (['k', 'v'] as const).map((kind) =>
    [stepName(kind, i), floatTensor(new Float32Array(B * K * E), [B, K, 1, E])])));
  for (let s = 0; T + s < S && !rows.allDone; s++) {
    for (let b = 0; b < B; b++) lastPos[b]++;
    const tokens = rows.out.map((r) => (r.done ? 0 : r.tokens[r.tokens.length - 1]));
    const stepFeeds = {
      ...params, ...caches, tokens: int64Tensor(tokens, [B, 1]), positions: int64Tensor(lastPos, [B, 1]),
      slot_mask: floatTensor(slotMask, [B, S]),
    };
    out = await decode.run(stepFeeds, step.fetches(steps));
    for (let i = 0; i < L; i++) {
      for (const kind of ['k', 'v'] as const) writeSlot(caches[cacheName(kind, i)].data as Float32Array, steps[stepName(kind, i)].data as Float32Array, S, E, T + s);
    }
    for (let b = 0; b < B; b++) slotMask[b * S + T + s] = 1; // the next step attends this one from the cache
    rows.push(...step.pick(out));
  }
  return rows.out.slice(0, n).map(({ done: _, ...g }) => g);
}

/**
 * The programs a request runs: the prefill over prompts padded to a multiple of promptMultiple, in row
 * chunks whose attention scores (rows·H·T²) fit the budget, and the decode step over the batch bucket.
 */
export function generationShapes(cfg: ModelConfig, req: GenerateRequest, attentionBudget = Infinity): { prefill: PrefillShape; decode: DecodeShape } {
  const T = up(Math.max(...req.prompts.map((p) => p.length)), req.promptMultiple ?? 16);
  const S = up(T + req.maxNewTokens, 32);
  const B = batchBucket(req.prompts.length);
  const chunk = largestDivisor(B, (r) => r * cfg.numHeads * T * T <= attentionBudget);
  return { prefill: { batch: chunk, promptLen: T, cacheLen: S }, decode: { batch: B, cacheLen: S } };
}

/**
 * Prefill in row chunks of `shape.batch` (attention holds chunk·H·T² scores per layer). Each
 * chunk writes its caches straight into its rows of the full [B, K, S, E] buffers (rows are the
 * leading axis, so a chunk's rows are one contiguous block); head outputs are concatenated.
 */
async function prefill(
  programs: ProgramCache, params: Record<string, Tensor>, prompts: readonly (readonly number[])[], shape: PrefillShape, step: Stepper,
) {
  const { numLayers: L, numKvHeads: K, headDim: E } = programs.layout.config;
  const [B, r, S] = [prompts.length, shape.batch, shape.cacheLen];
  const session = await programs.prefill(shape);
  const names = [...Array(L).keys()].flatMap((i) => [cacheName('k', i), cacheName('v', i)]);
  const full = Object.fromEntries(names.map((nm) => [nm, new Float32Array(B * K * S * E)]));
  const heads: Record<string, Tensor>[] = [];
  for (let start = 0; start < B; start += r) {
    const views = names.map((nm) => [nm, floatTensor(full[nm].subarray(start * K * S * E, (start + r) * K * S * E), [r, K, S, E])]);
    const { feeds } = promptFeeds(prompts.slice(start, start + r), shape.promptLen, S);
    heads.push(await session.run({ ...params, ...feeds }, step.fetches(Object.fromEntries(views))));
  }
  const caches = Object.fromEntries(names.map((nm) => [nm, floatTensor(full[nm], [B, K, S, E])]));
  return { out: concatHeads(heads), caches };
}

/** Row-wise concatenation of the chunks' head outputs (logits or greedy token and log-prob). */
function concatHeads(chunks: Record<string, Tensor>[]): Record<string, Tensor> {
  if (chunks.length === 1) return chunks[0];
  const cat = (name: string): Tensor => {
    const parts = chunks.map((c) => c[name]);
    const data = parts[0].data instanceof BigInt64Array ? new BigInt64Array(parts.reduce((s, p) => s + p.size, 0))
      : new Float32Array(parts.reduce((s, p) => s + p.size, 0));
    let at = 0;
    for (const p of parts) (data.set(p.data as never, at), (at += p.size));
    const dims = [parts.reduce((s, p) => s + p.dims[0], 0), ...parts[0].dims.slice(1)];
    return tensor(data instanceof BigInt64Array ? 'int64' : 'float32', dims, data);
  };
  return Object.fromEntries(Object.keys(chunks[0]).filter((k) => !k.startsWith('cache_')).map((k) => [k, cat(k)]));
}

function largestDivisor(n: number, fits: (d: number) => boolean): number {
  for (let d = n; d > 1; d--) if (n % d === 0 && fits(d)) return d;
  return 1;
}

/** Batch sizes generation compiles for: 1, 2, 4, 8, then multiples of 8 up to 64, then of 32. */
export function batchBucket(n: number): number {
  return n <= 8 ? 2 ** Math.ceil(Math.log2(n)) : up(n, n <= 64 ? 8 : 32);
}

/** Sampling state and the outputs each step fetches. */
class Stepper {
  private readonly sampler: TokenSampler;
  private readonly rngs: SamplingRng[];
  private readonly tokens: Int32Array;
  private readonly logprobs: Float32Array;
  private readonly options: SamplingOptions;
  constructor(req: GenerateRequest, B: number, V: number) {
    this.options = req.sampling ?? { temperature: 0 };
    this.sampler = new TokenSampler(V);
    this.rngs = Array.from({ length: B }, (_, b) =>
      req.rowSeeds ? SamplingRng.fromSeed(req.rowSeeds[b] ?? 0, 0) : SamplingRng.fromSeed(req.seed ?? 0, b));
    this.tokens = new Int32Array(B);
    this.logprobs = new Float32Array(B);
  }
  get greedy(): boolean {
    return this.options.temperature === 0;
  }
  /** The head outputs this mode needs, plus the caches (null = let onnxruntime allocate). */
  fetches(caches: Record<string, Tensor | null>, prefix = ''): Record<string, Tensor | null> {
    const heads: Record<string, null> = this.greedy ? { greedy_token: null, greedy_logprob: null } : { logits: null };
    return { ...heads, ...Object.fromEntries(Object.entries(caches).map(([k, t]) => [prefix + k, t])) };
  }
  pick(out: Record<string, Tensor>): [ArrayLike<number | bigint>, ArrayLike<number>] {
    if (this.greedy) return [out.greedy_token.data as BigInt64Array, out.greedy_logprob.data as Float32Array];
    this.sampler.sampleBatch(out.logits.data as Float32Array, this.options, this.rngs, this.tokens, this.logprobs);
    return [this.tokens, this.logprobs];
  }
}

export function promptFeeds(prompts: readonly (readonly number[])[], T: number, S: number) {
  const B = prompts.length;
  const tokens = new BigInt64Array(B * T);
  const mask = new Float32Array(B * T);
  const slotMask = new Float32Array(B * S);
  prompts.forEach((p, b) => {
    for (let i = 0; i < p.length; i++) {
      const t = T - p.length + i; // left padding: every prompt ends at T-1
      tokens[b * T + t] = BigInt(p[i]);
      mask[b * T + t] = slotMask[b * S + t] = 1;
    }
  });
  const feeds = {
    tokens: tensor('int64', [B, T], tokens),
    positions: tensor('int64', [B, T], positionsOf(mask, B, T)),
    attention_mask: floatTensor(mask, [B, T]),
  };
  return { feeds, lastPos: prompts.map((p) => p.length - 1), slotMask };
}

/** Writes a step's [B·K, E] keys or values into slot `slot` of a [B·K, S, E] cache, in place. */
function writeSlot(cache: Float32Array, step: Float32Array, S: number, E: number, slot: number): void {
  for (let r = 0; r < step.length / E; r++) cache.set(step.subarray(r * E, (r + 1) * E), (r * S + slot) * E);
}
