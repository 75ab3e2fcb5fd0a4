/**
 * The in-process policy: one model's parameters and AdamW state, and the compiled programs that
 * train, score and generate with them. `session.run` blocks the thread, so services use it through
 * PolicyEngine (a worker thread); tests and scripts may use it directly.
 *
 * Optimizer buffers are double-buffered: train_step reads the current set and writes the new
 * params and moments into the spare set (pre-allocated outputs), then the two swap.
 */
import { ConfigError } from '../../errors.ts';
import { type ProgramOverrides, programOptions } from '../graph/program-options.ts';
import { type FileDigests, saveCheckpoint } from '../io/checkpoint.ts';
import type { ModelConfig } from '../io/config.ts';
import { GROUPS, type Layout, type Role, buildLayout, paramCount } from '../model/layout.ts';
import type { Tensor } from '../io/dtype.ts';
import { initParamsParallel } from '../model/init-parallel.ts';
import type { LoraSpec } from '../model/lora.ts';
import { type Packed, clonePacked, fromNamed, initParams, zerosLike } from '../model/params.ts';
import {
  type Bucket,
  LOSS_FIELDS,
  type SequenceBatch,
  type TrainBatch,
  bucketFor,
  checkBatch,
  rowCalls,
  sliceRows,
  unshift,
} from '../programs/batch.ts';
import { lossDef } from '../programs/loss.ts';
import type { Tokenizer } from '../tokenizer/types.ts';
import { only, sequenceFeeds, weightFeeds } from './feeds.ts';
import { type GenerateRequest, type Generation, generate, generationShapes } from './generate.ts';
import type { CheckpointExtras, PolicyHandle, ScoreResult, TrainMetrics, TrainStepOptions } from './handle.ts';
import { type GenerationStats, emptyStats } from './prefill.ts';
import { PrefixCache } from './prefix-cache.ts';
import { type GenerationPrograms, ProgramCache } from './programs.ts';
import { withHeadRows } from '../programs/head-rows.ts';
import { ATTENTION_TIME_FACTOR, type PackOptions, packSharedPrefixes, unpack } from '../programs/prefix-pack.ts';
import { forwardFlopsPerToken } from '../model/flops.ts';
import { Int8Decode } from './int8-decode.ts';
import { type Provider, defaultThreads } from './session.ts';
import { type ImportOptions, type PolicyState, exportState, importState } from './state.ts';
import { type OptimizerBuffers, type TrainContext, trainStep, trainStepInPlace } from './train.ts';

export interface PolicyOptions {
  readonly config: ModelConfig;
  readonly role?: Role;
  /** Initialisation seed (ignored when parameters are set later). */
  readonly seed?: number;
  /**
   * Train LoRA adapters on a frozen base instead of every weight (model/lora.ts). The base enters the
   * programs but has no gradient, moments or spare copy; set it from HF-named weights with setBase.
   */
  readonly lora?: LoraSpec;
  readonly threads?: number;
  readonly provider?: Provider;
  /** Spin idle onnxruntime threads (default false; see SessionOptions.spin). */
  readonly spin?: boolean;
  /**
   * Keep each program's onnxruntime memory arena at its peak (default: for models below ARENA_MAX_PARAMS).
   * false returns memory after every call, at ~20% more train_step CPU time (page faults), measured on the
   * bench model. At 0.5B the arena's power-of-two growth (and the memory pattern's second block beside
   * the first run's chunks) took a 4x512 step past 23 GB, where the same step peaks at 14.4 GB without it.
   */
  readonly arena?: boolean;
  /** Sequence lengths are padded up to a multiple of this so programs are reused (default 32). */
  readonly seqMultiple?: number;
  /** Batch sizes are padded up to a multiple of this (default 1: exact). */
  readonly batchMultiple?: number;
  /** Decodes generated tokens for stop strings. */
  readonly tokenizer?: Tokenizer;
  /** Compiled programs kept (least recently used released first; default MAX_PROGRAMS). */
  readonly maxPrograms?: number;
  /** Kernel and gradient choices the programs are built with (default DEFAULT_PROGRAM_OPTIONS; part of their key). */
  readonly program?: ProgramOverrides;
  /**
   * Largest activation (floats) one program call may hold: a layer's attention scores (rows · heads · T²)
   * or an actor's logits (rows · T · vocab); larger batches are scored and trained in micro-batches
   * (default ATTENTION_BUDGET). Within a call the LM head goes in chunks of the program options' headChunkElements.
   */
  readonly attentionBudget?: number;
  /**
   * Update params and moments in place (engine/train.ts trainStepInPlace): one gradient buffer and no
   * spare copy of params and moments, so a step holds 4 parameter-sized buffers instead of 8 or more.
   * Default: when the trained parameters number IN_PLACE_MIN_PARAMS or more.
   */
  readonly inPlaceOptimizer?: boolean;
  /**
   * Bytes of keys and values kept between generate calls (engine/prefix-cache.ts): a rollout's rows then
   * prefill only what their previous turn's prompt lacks, and rows sharing a prefix compute it once.
   * The tokens and log-probs are those of a full prefill bit for bit. Default 0: every prompt prefilled whole.
   */
  readonly kvCacheBytes?: number;
  /**
   * With kvCacheBytes: compute once the prefixes several rows of a call share (default true;
   * false to measure the gain).
   */
  readonly prefixSharing?: boolean;
  /**
   * Weights the decode step of `generate` reads: 'float32' (default: the trained weights, fed) or 'int8' (every
   * projection and the LM head in blocks of 32, baked into sessions made once per weight version; model/quantize.ts).
   * Prefill, scoring and training stay float32. CPU only.
   */
  readonly rolloutWeights?: RolloutWeights;
  /**
   * Score and train rows that share a prompt with the prompt computed once (programs/prefix-pack.ts): a group's
   * rows become one packed row, its prompt then each row's own tokens. The same log-probs, values and gradients up
   * to float rounding. Training packs only with token-mean losses (per-sequence means need the rows apart).
   * Default: for models of PACK_MIN_PARAMS or more (base included).
   */
  readonly packPrefixes?: boolean;
  /**
   * An actor's LM head runs only on the positions a call reads (programs/head-rows.ts): in a train step the trained
   * tokens, in scoring those of the batch's headMask (every position without one). The same log-probs, entropies and
   * gradients up to float rounding. Default: for models of PACK_MIN_PARAMS or more (base included), where the head
   * over a real vocabulary is a fifth of a token's work.
   */
  readonly headRows?: boolean;
}

export type RolloutWeights = 'float32' | 'int8';

/**
 * 2^24 floats = 64 MB per layer's scores or per logits tensor: long-context batches and 150k-token
 * vocabularies then stay within a few GB (the loss holds several logits-sized tensors at once).
 */
export const ATTENTION_BUDGET = 1 << 24;

/**
 * 2^25 parameters (base included): from here on programs run without onnxruntime's memory arena
 * (see PolicyOptions.arena).
 */
export const ARENA_MAX_PARAMS = 1 << 25;

/**
 * 2^24 trained parameters (64 MB per copy): from here on a spare copy of params and moments
 * costs more than the one-graph step saves.
 */
export const IN_PLACE_MIN_PARAMS = 1 << 24;

/**
 * 2^25 parameters (base included): from here on packing a group's shared prompt pays. What packing saves is the
 * prompt's per-token work (with a real vocabulary the LM head is most of it); what it costs is fixed (the packed
 * row's masks, more programs to compile). Measured on Bandit groups of 8 (docs/benchmarks.md): from-scratch models
 * of 0.1M, 3M and 25M parameters ran 4.9x, 1.9x and 1.06x slower packed; SmolLM2-135M 2.3x faster.
 */
export const PACK_MIN_PARAMS = 1 << 25;

/** The parameters a policy of `layout` holds: a LoRA policy's frozen base included. */
export const heldParams = (layout: Layout): number =>
  paramCount(layout) + (layout.frozen ? paramCount(layout.frozen) : 0);

/** Whether a policy packs a group's shared prompt: `option` (PolicyOptions.packPrefixes), else by its size. */
export const packsPrefixes = (option: boolean | undefined, params: number): boolean =>
  option ?? params >= PACK_MIN_PARAMS;

/**
 * A query-key pair's cost against one token's in a packed row (prefix-pack.ts PackOptions.pairCost); a critic's
 * token has no LM head.
 */
export function packPairCost(cfg: ModelConfig, role: Role): number {
  const head = role === 'critic' ? 2 * cfg.hiddenSize * cfg.vocabSize : 0;
  const perPair = forwardFlopsPerToken(cfg, 1) - forwardFlopsPerToken(cfg, 0);
  return (ATTENTION_TIME_FACTOR * perPair) / (forwardFlopsPerToken(cfg, 0) - head);
}

export class Policy implements PolicyHandle {
  readonly layout: Layout;
  readonly programs: ProgramCache;
  /** Initialised on first use, so a policy loaded from a checkpoint never pays for a random init. */
  private packed: Packed | null = null;
  private frozenBase: Packed | null = null;
  private moments: { m: Packed; v: Packed } | null = null;
  private spare: OptimizerBuffers | null = null;
  private readonly scratch: TrainContext['scratch'] = {};
  private lock: Promise<unknown> = Promise.resolve();
  /** Prefixes' keys and values under the current weights (cleared whenever they change); null = none kept. */
  private readonly prefixes: PrefixCache | null;
  /** With rolloutWeights 'int8': the decode sessions of the current weights (released whenever they change). */
  readonly int8Decode: Int8Decode | null;
  /** Whether scoring and training pack rows that share a prompt (PolicyOptions.packPrefixes). */
  private readonly packs: boolean;
  /** Whether the LM head runs on the positions a call reads only (PolicyOptions.headRows; an actor's). */
  private readonly heads: boolean;
  private readonly packing: PackOptions;
  /** Token counts of every generate call so far. */
  readonly generationStats: GenerationStats = emptyStats();
  /** Optimizer steps taken (skipped steps do not count). */
  step = 0;

  constructor(readonly options: PolicyOptions) {
    this.layout = buildLayout(options.config, options.role ?? 'actor', options.lora ?? null);
    const params = heldParams(this.layout);
    const arena = options.arena ?? params < ARENA_MAX_PARAMS;
    this.packs = packsPrefixes(options.packPrefixes, params);
    this.heads = this.layout.role === 'actor' && (options.headRows ?? params >= PACK_MIN_PARAMS);
    this.packing = { pairCost: packPairCost(options.config, this.layout.role) };
    const session = {
      threads: options.threads ?? defaultThreads(),
      provider: options.provider,
      spin: options.spin,
      arena,
    };
    this.programs = new ProgramCache(this.layout, session, options.maxPrograms, programOptions(options.program));
    const kvBytes = options.kvCacheBytes ?? 0;
    this.prefixes = kvBytes > 0 ? new PrefixCache(Math.floor(kvBytes / 4)) : null;
    const int8 = options.rolloutWeights === 'int8';
    if (int8 && (options.provider ?? 'cpu') !== 'cpu')
      throw new ConfigError('rolloutWeights', 'int8 rollouts run on the CPU provider only');
    this.int8Decode = int8 ? new Int8Decode(this.programs) : null;
  }

  /**
   * The weights may have changed: keys and values kept between calls are stale, and so are the int8 decode's
   * sessions when the changed weights are the ones it quantized (the whole model; under LoRA only the base).
   */
  private weightsChanged(base: boolean): void {
    this.prefixes?.clear();
    if (base || !this.layout.frozen) void this.int8Decode?.invalidate();
  }

  get role(): Role {
    return this.layout.role;
  }

  /** The live packed parameters (not a copy: treat as read-only). */
  getParams(): Packed {
    return this.params;
  }

  private get params(): Packed {
    return (this.packed ??= initParams(this.layout, this.options.seed ?? 0));
  }

  private set params(p: Packed) {
    this.packed = p;
    this.weightsChanged(false);
  }

  /**
   * Draws the initial parameters (and a LoRA policy's frozen base) on several threads, unless they are
   * set already; the values are the same as the lazy initialisation on first use (initParams), which
   * every operation otherwise starts with. Operations call it first, so a 0.5B model's 500M draws are
   * shared across the cores instead of run on one.
   */
  async initialize(): Promise<void> {
    const threads = this.options.threads ?? defaultThreads();
    const seed = this.options.seed ?? 0;
    if (!this.packed) {
      const p = await initParamsParallel(this.layout, seed, threads);
      this.packed ??= p; // setParams may have run meanwhile
    }
    const frozen = this.layout.frozen;
    if (frozen && !this.frozenBase) {
      const p = await initParamsParallel(frozen, seed, threads);
      this.frozenBase ??= p;
    }
  }

  /** Replaces the parameters with a copy of `p` (or `p` itself with copy = false: the policy then owns it). */
  setParams(p: Packed, copy = true): void {
    for (const g of GROUPS) {
      const want = this.layout.groups[g];
      if (p[g].length !== want) throw new ConfigError(`params.${g}`, `has ${p[g].length} values, expected ${want}`);
    }
    this.params = copy ? clonePacked(p) : p;
    this.spare = null;
  }

  /** With LoRA, the frozen base weights (drawn from the seed until setBase is called); else null. Read-only. */
  getBase(): Packed | null {
    const frozen = this.layout.frozen;
    return frozen && (this.frozenBase ??= initParams(frozen, this.options.seed ?? 0));
  }

  /**
   * LoRA only: sets the frozen base from HF-named weights, all of which must be present; returns the
   * names not used (e.g. an lm_head.weight a critic has no use for).
   */
  setBase(weights: ReadonlyMap<string, Tensor> | Readonly<Record<string, Tensor>>): { unused: string[] } {
    const frozen = this.layout.frozen;
    if (!frozen)
      throw new ConfigError('lora', 'setBase is for a LoRA policy; set a full model with setParams or importState');
    const { packed, unused } = fromNamed(
      frozen,
      weights instanceof Map ? Object.fromEntries(weights) : (weights as Record<string, Tensor>),
    );
    this.frozenBase = packed;
    this.weightsChanged(true);
    return { unused };
  }

  /** AdamW moments (zeros until the first step), or null before any training. */
  getMoments(): { m: Packed; v: Packed } | null {
    return this.moments;
  }

  /** Replaces the moments with copies (or the given ones with copy = false: the policy then owns them) and the step. */
  setMoments(moments: { m: Packed; v: Packed } | null, step: number, copy = true): void {
    this.moments = moments && (copy ? { m: clonePacked(moments.m), v: clonePacked(moments.v) } : moments);
    this.step = step;
    this.spare = null;
  }

  /** A copy of weights (HF names), AdamW moments (unless `optimizer` is false) and step, after the calls before it. */
  getState(optimizer = true): Promise<PolicyState> {
    return this.exclusive(async () => exportState(this, optimizer));
  }

  saveCheckpoint(dir: string, extras: CheckpointExtras, optimizer = true): Promise<FileDigests> {
    // Views of the live buffers: the lock keeps every other operation off them until the files are written.
    return this.exclusive(() => saveCheckpoint(dir, { ...extras, ...exportState(this, optimizer, false) }));
  }

  /** importState, after the calls before it. */
  setState(state: PolicyState, opts?: ImportOptions): Promise<{ unused: string[] }> {
    return this.exclusive(async () => importState(this, state, opts));
  }

  /** Runs operations one at a time (they share buffers and programs), in call order. */
  private exclusive<T>(op: () => Promise<T>): Promise<T> {
    const run = this.lock.then(op, op);
    this.lock = run.catch(() => undefined);
    return run;
  }

  trainStep(batch: TrainBatch, opts: TrainStepOptions): Promise<TrainMetrics> {
    return this.exclusive(() => this.runTrainStep(batch, opts));
  }

  private async runTrainStep(batch: TrainBatch, opts: TrainStepOptions): Promise<TrainMetrics> {
    await this.initialize();
    this.weightsChanged(false); // the step may change the weights in place
    const def = lossDef(opts.loss);
    if ((def.head === 'value') !== (this.role === 'critic')) {
      throw new ConfigError('loss.kind', `${opts.loss.kind} does not fit a ${this.role}`);
    }
    const fields = def.inputs(opts.loss).map((n) => LOSS_FIELDS[n as keyof typeof LOSS_FIELDS]);
    checkBatch(batch, ['lossMask', ...fields]);
    const pack = this.packs && opts.loss.aggregation === 'token-mean' ? packSharedPrefixes(batch, this.packing) : null;
    if (pack) batch = pack.batch;
    const bucket = { ...this.bucket(batch), ...(pack ? { packed: true } : {}) };
    this.moments ??= { m: zerosLike(this.layout), v: zerosLike(this.layout) };
    const ctx = {
      layout: this.layout,
      frozen: this.getBase(),
      programs: this.programs,
      rows: this.rowsPerCall(bucket),
      heads: this.heads,
      scratch: this.scratch,
    };
    if (this.options.inPlaceOptimizer ?? paramCount(this.layout) >= IN_PLACE_MIN_PARAMS) {
      this.spare = null;
      const grads = (this.scratch.grads ??= zerosLike(this.layout));
      const metrics = await trainStepInPlace(
        ctx,
        { params: this.params, ...this.moments },
        grads,
        this.step + 1,
        batch,
        bucket,
        opts,
      );
      if (metrics.skipped === 0) this.step++;
      return metrics;
    }
    const spare = (this.spare ??= {
      params: zerosLike(this.layout),
      m: zerosLike(this.layout),
      v: zerosLike(this.layout),
    });
    const state = { params: this.params, ...this.moments };
    const metrics = await trainStep(ctx, state, spare, this.step + 1, batch, bucket, opts);
    if (metrics.skipped !== 0) return metrics; // a non-finite gradient: the spare buffers hold no usable update
    this.spare = state;
    [this.params, this.moments] = [spare.params, { m: spare.m, v: spare.v }];
    this.step++;
    return metrics;
  }

  /**
   * Rows one program call may take so that a layer's attention scores (rows·H·T²) and logits (rows·T·V) fit the budget.
   */
  private rowsPerCall(bucket: Bucket): number {
    const { numHeads, vocabSize } = this.layout.config;
    const T = bucket.seqLen;
    // Rows multiply every layer's activations too, not only the scores and logits: with the head in chunks
    // (headChunkElements) and rows by the scores alone, SmolLM2's 4 × 512 step ran as one call and peaked at 6.4 GB
    // against 3.6 as four (engine/README.md), so a row's whole logits count here whatever the chunks.
    const perRow = Math.max(numHeads * T * T, this.role === 'actor' ? T * vocabSize : 0);
    let rows = 1;
    while (rows < bucket.batch && 2 * rows * perRow <= (this.options.attentionBudget ?? ATTENTION_BUDGET)) rows *= 2;
    return rows >= bucket.batch ? bucket.batch : rows;
  }

  score(batch: SequenceBatch, temperature = 1): Promise<ScoreResult> {
    return this.exclusive(() => this.runScore(batch, temperature));
  }

  private async runScore(batch: SequenceBatch, temperature: number): Promise<ScoreResult> {
    await this.initialize();
    checkBatch(batch);
    const pack = this.packs ? packSharedPrefixes(batch, this.packing) : null;
    if (!pack) return this.scoreRows(batch, this.bucket(batch), temperature);
    const packed = await this.scoreRows(pack.batch, { ...this.bucket(pack.batch), packed: true }, temperature);
    return Object.fromEntries(Object.entries(packed).map(([n, v]) => [n, unpack(v!, pack.toPacked)])) as ScoreResult;
  }

  /** Scores the batch's rows (packed ones when the bucket says so) in calls that fit the attention budget. */
  private async scoreRows(batch: SequenceBatch, bucket: Bucket, temperature: number): Promise<ScoreResult> {
    const names = this.role === 'critic' ? ['values'] : ['logprobs', 'entropy'];
    const result = Object.fromEntries(names.map((n) => [n, new Float32Array(batch.batch * batch.seqLen)]));
    const weights = weightFeeds(this.layout, this.params, this.getBase());
    for (const [start, rows] of rowCalls(batch.batch, this.rowsPerCall(bucket))) {
      const part = sliceRows(batch, start, rows);
      const { shape: chunk, heads } = withHeadRows(this.heads ? part.headMask : null, part, { ...bucket, batch: rows });
      const session = await this.programs.score(chunk);
      const out = await session.run(only(session, { ...sequenceFeeds(part, chunk, temperature, heads), ...weights }));
      for (const n of names) result[n].set(unshift(out[n].data as Float32Array, chunk, part), start * batch.seqLen);
    }
    return result as ScoreResult;
  }

  async generate(req: GenerateRequest): Promise<Generation[]> {
    if (this.role !== 'actor') throw new ConfigError('role', 'only an actor generates');
    const budget = this.options.attentionBudget ?? ATTENTION_BUDGET;
    // With LoRA the programs apply the adapters unmerged: merging would need a second base-sized buffer.
    return this.exclusive(async () => {
      await this.initialize();
      const memory = { store: this.prefixes, stats: this.generationStats, share: this.options.prefixSharing ?? true };
      return generate(
        this.generationPrograms(),
        weightFeeds(this.layout, this.params, this.getBase()),
        req,
        this.options.tokenizer,
        budget,
        memory,
      );
    });
  }

  /** Compiles the programs `generate(req)` would run without a PrefixCache (extend and decode) without running them. */
  compileGenerate(req: GenerateRequest): Promise<void> {
    const shapes = generationShapes(this.layout.config, req, this.options.attentionBudget ?? ATTENTION_BUDGET);
    return this.exclusive(async () => {
      await this.initialize();
      const programs = this.generationPrograms();
      await Promise.all([programs.extend(shapes.extend), programs.decode(shapes.decode)]);
    });
  }

  /** The policy's programs, with the int8 decode in place of the float32 one under rolloutWeights 'int8'. */
  private generationPrograms(): GenerationPrograms {
    const int8 = this.int8Decode;
    if (!int8) return this.programs;
    const base = () => (this.layout.frozen ? this.getBase()! : this.params);
    return {
      layout: this.layout,
      extend: (shape) => this.programs.extend(shape),
      decode: (shape) => int8.decode(shape, base),
      // each decode shape is a session holding its own prepacked int8 weights (~150 MB for SmolLM2-135M, a few
      // kept): smaller batches as rows stop would build more of them than the rows' steps save
      fixedDecodeBatch: true,
    };
  }

  /** Drops the keys and values kept between generate calls (they are dropped anyway when the weights change). */
  clearGenerationCache(): void {
    this.prefixes?.clear();
  }

  /** Frees every compiled program and its onnxruntime memory; later calls compile what they need again. */
  releasePrograms(): Promise<void> {
    return this.exclusive(async () => {
      await this.int8Decode?.invalidate();
      await this.programs.release();
    });
  }

  close(): Promise<void> {
    return this.releasePrograms();
  }

  private bucket(b: SequenceBatch) {
    return bucketFor(b, this.options.seqMultiple ?? 32, this.options.batchMultiple ?? 1);
  }
}

export { packedFeeds, weightFeeds } from './feeds.ts';
