/**
 * Batched generation: prefill the key/value cache (engine/prefill.ts: with a PrefixCache, only what each
 * row's cached prefix lacks), then one decode step per token. The cache is position-aligned (a row's token
 * at position p in slot p), so a row's numbers do not depend on the other rows of the batch or on how its
 * prompt was split between calls. Sampling runs here in TypeScript (temperature / top-k / top-p, one
 * seeded stream per row, so a row's tokens do not depend on its batch); greedy decoding (temperature 0)
 * reads the in-graph argmax instead and never copies the logits out, and plain sampling at temperature 1 (RL's
 * rollouts) reads the in-graph weights exp(logit − max), leaving TypeScript the sums and the draw.
 * Rows with the same prompt (a group's rollouts) are prefilled once and decode as a group that reads the prompt's
 * keys and values once per step, not once per row (DecodeBatch; programs/generate.ts).
 * Rows stop at a stop token or string; the batch runs until every row has stopped or hit maxNewTokens. Stopped
 * rows leave the batch: once the rows still writing fit half the ranks or fewer, they move to the front of the
 * caches and the steps after run the smaller program (a row's numbers do not depend on its batch or its group).
 */
import { ConfigError } from '../../errors.ts';
import type { ModelConfig } from '../io/config.ts';
import {
  type DecodeShape,
  type ExtendShape,
  cacheName,
  decodeBatch,
  prefixName,
  stepName,
} from '../programs/generate.ts';
import { SamplingRng } from '../sampling/rng.ts';
import { drawFromWeights, type SamplingOptions, TokenSampler } from '../sampling/sampler.ts';
import { StopMatcher } from '../sampling/stop.ts';
import type { Tokenizer } from '../tokenizer/types.ts';
import { extendShape, extendSlots } from './extend.ts';
import { BatchCache } from './kv-cache.ts';
import {
  type GenerationStats,
  type PrefillContext,
  batchBucket,
  emptyStats,
  padToBucket,
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
  /** One step's picks, by entry: `order[i]` is the row entry i is for (-1: none). */
  push(
    tokens: ArrayLike<number | bigint>,
    logprobs: ArrayLike<number>,
    entropies: ArrayLike<number>,
    order: readonly number[],
  ): void {
    for (let i = 0; i < order.length; i++) {
      const b = order[i];
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
  const groups = promptGroups(cfg, req.prompts);
  const distinct = groups.members.map((rows) => req.prompts[rows[0]]);
  const prompts = padToBucket(distinct);
  const ctx: PrefillContext = { programs, params, multiple: req.promptMultiple ?? 16, attentionBudget, ...memory };
  const t0 = performance.now();
  if (memory.share !== false) await sharePrefixes(ctx, distinct);
  const step = new Stepper(req, n, cfg.vocabSize);
  const { cache, out, starts } = await prefill(ctx, prompts, distinct.length, extendSlots(req.prompts), step.heads);
  countPrompts(memory.stats, req.prompts, groups, starts);
  const t1 = performance.now();
  const rows = new Rows(
    n,
    req.maxNewTokens,
    new Set(req.stopTokenIds ?? cfg.eosTokenIds),
    req.stopStrings ?? [],
    tokenizer,
    req.onToken,
  );
  const everyRow = [...Array(n).keys()];
  // each row's first token, from its prompt's head
  rows.push(...step.pick(out, groups.ofRow, everyRow, rows), everyRow);
  await decode(programs, params, new DecodeBatch(cache, prompts, groups, req.maxNewTokens), rows, step, memory.stats);
  memory.stats.prefillSeconds += (t1 - t0) / 1000;
  memory.stats.decodeSeconds += (performance.now() - t1) / 1000;
  return rows.out.map(({ done: _, ...g }) => g);
}

/** A call's rows by prompt: each distinct prompt's rows (`members`), each row's prompt (`ofRow`), the most of one. */
export interface PromptGroups {
  readonly members: readonly (readonly number[])[];
  readonly ofRow: readonly number[];
  readonly perGroup: number;
}

/**
 * Rows with the same prompt (a GRPO group's rollouts) decode as one group reading the prompt's cache once. Not on
 * models with one query head per key/value head: a group of one row would then be a one-row product (MLAS's
 * matrix-vector kernel sums in another order than a group's), so every row there is a group of its own.
 */
export function promptGroups(cfg: ModelConfig, prompts: readonly (readonly number[])[]): PromptGroups {
  const grouped = cfg.numHeads / cfg.numKvHeads >= 2;
  const index = new Map<string, number>();
  const members: number[][] = [];
  const ofRow = prompts.map((p, b) => {
    const key = grouped ? p.join(',') : String(b);
    let g = index.get(key);
    if (g === undefined) index.set(key, (g = members.push([]) - 1));
    members[g].push(b);
    return g;
  });
  return { members, ofRow, perGroup: Math.max(...members.map((m) => m.length)) };
}

function countPrompts(
  stats: GenerationStats,
  prompts: readonly (readonly number[])[],
  groups: PromptGroups,
  starts: readonly number[],
): void {
  prompts.forEach((p, b) => {
    const g = groups.ofRow[b];
    // a group's first row computes what the store lacks; the others take its keys
    const start = groups.members[g][0] === b ? starts[g] : p.length;
    stats.prompt += p.length;
    stats.reused += start;
    stats.prefilled += p.length - start;
  });
}

/**
 * A call's first decode step: its groups over prompts of `prefixLen` slots (extendSlots: a multiple of 32, as the
 * decode's lanes need) and slots for the tokens a row generates (all but its last are fed back), rounded up to 32.
 * Ungrouped rows take the prefill's padded batch: one-row programs are not run (engine README).
 */
function firstDecodeShape(groups: PromptGroups, prefixLen: number, maxNewTokens: number): DecodeShape {
  const ungrouped = groups.perGroup === 1;
  return {
    groups: ungrouped ? batchBucket(groups.members.length) : groups.members.length,
    perGroup: groups.perGroup,
    prefixLen,
    cacheLen: up(maxNewTokens, 32),
  };
}

/**
 * The rows a decode step runs, as `groups` × `perGroup` ranks (-1: a rank no row holds), with their caches: each
 * group's prompt (the prefill's cache, group g in its row g) and each rank's generated tokens since.
 */
class DecodeBatch {
  order: number[];
  perGroup: number;
  groups: number;
  readonly own: BatchCache;
  /** Per rank: the position of the token fed next (once incremented) and the generated slots written. */
  readonly positions: number[];
  readonly written: number[];
  readonly slotMask: Float32Array;
  readonly prefixMask: Float32Array;
  constructor(
    readonly prefix: BatchCache,
    prompts: readonly (readonly number[])[],
    groups: PromptGroups,
    maxNewTokens: number,
  ) {
    const first = firstDecodeShape(groups, prefix.slots, maxNewTokens);
    [this.groups, this.perGroup] = [first.groups, first.perGroup];
    const B = decodeBatch(first);
    this.order = Array<number>(B).fill(-1);
    groups.members.forEach((rows, g) => rows.forEach((b, r) => (this.order[g * this.perGroup + r] = b)));
    this.own = new BatchCache(prefix.config, B, first.cacheLen);
    this.positions = this.order.map((b) => (b >= 0 ? prompts[groups.ofRow[b]].length - 1 : 0));
    this.written = Array<number>(B).fill(0);
    this.slotMask = new Float32Array(B * this.own.slots);
    const P = prefix.slots;
    this.prefixMask = new Float32Array(prefix.batch * P);
    prompts.forEach((p, g) => this.prefixMask.fill(1, g * P, g * P + p.length));
  }

  get shape(): DecodeShape {
    return { groups: this.groups, perGroup: this.perGroup, prefixLen: this.prefix.slots, cacheLen: this.own.slots };
  }

  /** The step's inputs besides the weights, for the ranks' last tokens (0 where a rank does not write). */
  feeds(tokens: readonly number[]): Record<string, OrtTensor> {
    const [B, P, N] = [this.order.length, this.prefix.slots, this.own.slots];
    return {
      ...this.prefix.tensors(0, this.groups, prefixName),
      ...this.own.tensors(0, B),
      tokens: int64Tensor(tokens, [B, 1]),
      positions: int64Tensor(this.positions.slice(0, B), [B, 1]),
      slot_mask: floatTensor(this.slotMask.subarray(0, B * N), [B, N]),
      prefix_mask: floatTensor(this.prefixMask.subarray(0, this.groups * P), [this.groups, P]),
    };
  }

  /** Writes the step's keys and values of the ranks that wrote into their next generated slot. */
  write(fresh: Record<string, Float32Array>, writing: readonly boolean[]): void {
    const N = this.own.slots;
    this.own.write(
      fresh,
      1,
      0,
      this.written,
      writing.map((w) => (w ? 1 : 0)),
    );
    writing.forEach((w, i) => {
      if (!w) return;
      this.slotMask[i * N + this.written[i]] = 1; // later steps attend this one from the cache
      this.written[i]++;
    });
  }

  /**
   * Once the rows still writing fit half the ranks or fewer, they move to the front: their groups to the first
   * groups (prompt cache and mask), their ranks to the first of each group (generated slots, positions, masks).
   * Groups halve their ranks while the fullest still fits; ungrouped rows keep to the batch buckets.
   */
  close(rows: Rows): boolean {
    const R = this.perGroup;
    const kept: { group: number; ranks: number[] }[] = [];
    for (let g = 0; g * R < this.order.length; g++) {
      const ranks = [...Array(R).keys()].map((r) => g * R + r).filter((i) => rows.writing(this.order[i]));
      if (ranks.length) kept.push({ group: g, ranks });
    }
    const most = Math.max(...kept.map((k) => k.ranks.length));
    let perGroup = R;
    while (perGroup > 1 && Math.ceil(perGroup / 2) >= most) perGroup = Math.ceil(perGroup / 2);
    const groups = perGroup === 1 ? batchBucket(kept.length) : kept.length;
    if (groups * perGroup > this.order.length / 2) return false;
    const [P, N] = [this.prefix.slots, this.own.slots];
    const order = Array<number>(groups * perGroup).fill(-1);
    // every move goes to a lower or the same index, in increasing order: nothing is overwritten before it moves
    kept.forEach(({ group, ranks }, to) => {
      if (group !== to) {
        this.prefix.moveRow(group, to, P);
        this.prefixMask.copyWithin(to * P, group * P, (group + 1) * P);
      }
      ranks.forEach((from, r) => {
        const at = to * perGroup + r;
        order[at] = this.order[from];
        if (from === at) return;
        this.own.moveRow(from, at, this.written[from]);
        this.positions[at] = this.positions[from];
        this.written[at] = this.written[from];
        this.slotMask.copyWithin(at * N, from * N, (from + 1) * N);
      });
    });
    [this.order, this.perGroup, this.groups] = [order, perGroup, groups];
    return true;
  }
}

/** One decode step per token until every row is done; each step's keys and values go into the row's next slot. */
async function decode(
  programs: GenerationPrograms,
  params: Record<string, OrtTensor>,
  batch: DecodeBatch,
  rows: Rows,
  step: Stepper,
  stats: GenerationStats,
): Promise<void> {
  let program = await decodeProgram(programs, params, batch.shape);
  while (!rows.allDone) {
    if (!programs.fixedDecodeBatch && batch.close(rows)) program = await decodeProgram(programs, params, batch.shape);
    const { order } = batch;
    const writing = order.map((b) => rows.writing(b));
    writing.forEach((w, i) => w && batch.positions[i]++);
    const tokens = order.map((b, i) => (writing[i] ? rows.out[b].tokens.at(-1)! : 0));
    const out = await program.session.run(
      { ...program.weights, ...batch.feeds(tokens) },
      { ...Object.fromEntries(step.heads.map((h) => [h, null])), ...program.steps },
    );
    batch.write(program.fresh, writing);
    stats.decoded += order.length;
    rows.push(...step.pick(out, [...order.keys()], order, rows), order);
  }
}

/** The decode program of a shape, with the buffers its steps write. */
async function decodeProgram(programs: GenerationPrograms, params: Record<string, OrtTensor>, shape: DecodeShape) {
  const { numLayers: L, numKvHeads: K, headDim: E } = programs.layout.config;
  const batch = decodeBatch(shape);
  const session = await programs.decode(shape);
  const weights = Object.fromEntries(session.inputNames.filter((n) => n in params).map((n) => [n, params[n]]));
  const kinds = [...Array(L).keys()].flatMap((i) =>
    (['k', 'v'] as const).map((kind) => [cacheName(kind, i), stepName(kind, i)]),
  );
  const steps = Object.fromEntries(
    kinds.map(([, nm]) => [nm, floatTensor(new Float32Array(batch * K * E), [batch, K, 1, E])]),
  );
  const fresh = Object.fromEntries(kinds.map(([slot, nm]) => [slot, steps[nm].data as Float32Array]));
  return { session, weights, steps, fresh };
}

/**
 * The programs a request runs without a PrefixCache: the extend over its distinct prompts padded to a multiple of
 * promptMultiple, in row chunks whose attention scores (rows·H·N·S) fit the budget, and the decode step.
 */
export function generationShapes(
  cfg: ModelConfig,
  req: GenerateRequest,
  attentionBudget = Infinity,
): { extend: ExtendShape; decode: DecodeShape } {
  const groups = promptGroups(cfg, req.prompts);
  const S = extendSlots(req.prompts);
  const prompts = padToBucket(groups.members.map((m) => req.prompts[m[0]]));
  const rows = { prompts, starts: prompts.map(() => 0) };
  const { newLen, chunk } = extendShape(rows, cfg.numHeads, S, req.promptMultiple ?? 16, attentionBudget);
  return { extend: { batch: chunk, newLen, cacheLen: S }, decode: firstDecodeShape(groups, S, req.maxNewTokens) };
}

/** Sampling state and the head outputs each step fetches. */
class Stepper {
  private readonly sampler: TokenSampler;
  private readonly rngs: SamplingRng[];
  private tokens: Int32Array;
  private logprobs: Float32Array;
  private entropies: Float32Array;
  private readonly options: SamplingOptions;
  constructor(req: GenerateRequest, B: number, V: number) {
    this.options = req.sampling ?? { temperature: 0 };
    this.sampler = new TokenSampler(V);
    this.rngs = Array.from({ length: B }, (_, b) =>
      req.rowSeeds ? SamplingRng.fromSeed(req.rowSeeds[b] ?? 0, 0) : SamplingRng.fromSeed(req.seed ?? 0, b),
    );
    [this.tokens, this.logprobs, this.entropies] = this.buffers(B);
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
  /**
   * The step's tokens by entry: entry i samples for row `order[i]` from the heads' row `sources[i]` (a group's
   * first token: every row from its prompt's head; a decode step: each rank from its own). Entries whose row is
   * not writing are not sampled (their rows are done: nothing reads them).
   */
  pick(
    out: Record<string, OrtTensor>,
    sources: readonly number[],
    order: readonly number[],
    rows: Rows,
  ): [ArrayLike<number | bigint>, ArrayLike<number>, ArrayLike<number>] {
    const n = order.length;
    if (this.tokens.length < n) [this.tokens, this.logprobs, this.entropies] = this.buffers(n);
    const f32 = (name: string) => out[name].data as Float32Array;
    const greedy = this.greedy
      ? {
          token: out.greedy_token.data as BigInt64Array,
          logprob: f32('greedy_logprob'),
          entropy: f32('greedy_entropy'),
        }
      : null;
    const logits = greedy ? null : f32('logits');
    const V = logits ? logits.length / out.logits.dims[0] : 0;
    const weights = !greedy && this.fromWeights ? f32('sample_weights') : null;
    for (let i = 0; i < n; i++) {
      const [b, s] = [order[i], sources[i]];
      if (!rows.writing(b)) continue;
      if (greedy) {
        [this.tokens[i], this.logprobs[i], this.entropies[i]] = [
          Number(greedy.token[s]),
          greedy.logprob[s],
          greedy.entropy[s],
        ];
      } else if (weights) {
        const r = drawFromWeights(weights, logits!, s * V, V, this.rngs[b]);
        [this.tokens[i], this.logprobs[i], this.entropies[i]] = [r.token, r.logProb, r.entropy];
      } else {
        const row = logits!.subarray(s * V, (s + 1) * V);
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

  private buffers(n: number): [Int32Array, Float32Array, Float32Array] {
    return [new Int32Array(n), new Float32Array(n), new Float32Array(n)];
  }
}
