/**
 * The in-process policy: one model's parameters and AdamW state, and the compiled programs that
 * train, score and generate with them. `session.run` blocks the thread, so services use it through
 * PolicyEngine (a worker thread); tests and scripts may use it directly.
 *
 * Optimizer buffers are double-buffered: train_step reads the current set and writes the new
 * params and moments into the spare set (pre-allocated outputs), then the two swap.
 */
import { ConfigError } from '../../errors.ts';
import type { ModelConfig } from '../io/config.ts';
import { GROUPS, type Layout, type Role, buildLayout } from '../model/layout.ts';
import { type Packed, clonePacked, initParams, zerosLike } from '../model/params.ts';
import { type AdamWSpec, DEFAULT_ADAMW } from '../programs/adamw.ts';
import {
  type Bucket, LOSS_FIELDS, type SequenceBatch, type TrainBatch, bucketFor, checkBatch, place, placeInt, positionsOf, unshift,
} from '../programs/batch.ts';
import { type LossSpec, lossDef } from '../programs/loss.ts';
import type { Tokenizer } from '../tokenizer/types.ts';
import { type GenerateRequest, type Generation, generate } from './generate.ts';
import { ProgramCache } from './programs.ts';
import { type Provider, type Session, type Tensor, defaultThreads, floatTensor, scalarTensor, tensor } from './session.ts';

export interface PolicyOptions {
  readonly config: ModelConfig;
  readonly role?: Role;
  /** Initialisation seed (ignored when parameters are set later). */
  readonly seed?: number;
  readonly threads?: number;
  readonly provider?: Provider;
  /** Spin idle onnxruntime threads (default true; see SessionOptions.spin). */
  readonly spin?: boolean;
  /** Sequence lengths are padded up to a multiple of this so programs are reused (default 32). */
  readonly seqMultiple?: number;
  /** Batch sizes are padded up to a multiple of this (default 1: exact). */
  readonly batchMultiple?: number;
  /** Decodes generated tokens for stop strings. */
  readonly tokenizer?: Tokenizer;
  /** Compiled programs kept (least recently used released first; default MAX_PROGRAMS). */
  readonly maxPrograms?: number;
}

export interface TrainStepOptions {
  readonly loss: LossSpec;
  readonly lr: number;
  readonly optim?: AdamWSpec;
  /** Sampling temperature of the rollout; log-probs are those of logits / T (default 1). */
  readonly temperature?: number;
}

/** Metric name → value; always has loss, grad_norm, skipped (1 = non-finite gradient, no update), tokens. */
export type TrainMetrics = Record<string, number>;

export interface ScoreResult {
  /** [batch · seqLen], token-aligned: log p(token t | tokens < t); 0 at t = 0. Actor only. */
  readonly logprobs?: Float32Array;
  readonly entropy?: Float32Array;
  /** Critic only: value of the state before token t. */
  readonly values?: Float32Array;
}

interface OptimizerBuffers {
  params: Packed;
  m: Packed;
  v: Packed;
}

export class Policy {
  readonly layout: Layout;
  readonly programs: ProgramCache;
  /** Initialised on first use, so a policy loaded from a checkpoint never pays for a random init. */
  private packed: Packed | null = null;
  private moments: { m: Packed; v: Packed } | null = null;
  private spare: OptimizerBuffers | null = null;
  private lock: Promise<unknown> = Promise.resolve();
  /** Optimizer steps taken (skipped steps do not count). */
  step = 0;

  constructor(readonly options: PolicyOptions) {
    this.layout = buildLayout(options.config, options.role ?? 'actor');
    const session = { threads: options.threads ?? defaultThreads(), provider: options.provider, spin: options.spin };
    this.programs = new ProgramCache(this.layout, session, options.maxPrograms);
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

  /** AdamW moments (zeros until the first step), or null before any training. */
  getMoments(): { m: Packed; v: Packed } | null {
    return this.moments;
  }

  setMoments(moments: { m: Packed; v: Packed } | null, step: number): void {
    this.moments = moments && { m: clonePacked(moments.m), v: clonePacked(moments.v) };
    this.step = step;
    this.spare = null;
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
    const def = lossDef(opts.loss);
    if ((def.head === 'value') !== (this.role === 'critic')) {
      throw new ConfigError('loss.kind', `${opts.loss.kind} does not fit a ${this.role}`);
    }
    const fields = def.inputs(opts.loss).map((n) => LOSS_FIELDS[n as keyof typeof LOSS_FIELDS]);
    checkBatch(batch, ['lossMask', ...fields]);
    const bucket = this.bucket(batch);
    const prog = await this.programs.train(bucket, opts.loss, opts.optim ?? DEFAULT_ADAMW);
    this.moments ??= { m: zerosLike(this.layout), v: zerosLike(this.layout) };
    const spare = (this.spare ??= { params: zerosLike(this.layout), m: zerosLike(this.layout), v: zerosLike(this.layout) });
    const feeds: Record<string, Tensor> = {
      ...this.sequenceFeeds(batch, bucket, opts.temperature),
      ...weightFeeds(this.layout, this.params), ...packedFeeds('params', this.params),
      ...packedFeeds('m', this.moments.m), ...packedFeeds('v', this.moments.v),
      loss_mask: floatTensor(place(batch.lossMask, batch, bucket, 1, 'float32'), [bucket.batch, bucket.seqLen]),
      lr: scalarTensor(opts.lr, 'float32'),
      step: scalarTensor(this.step + 1, 'float32'),
    };
    prog.lossInputs.forEach((n, i) => {
      feeds[n] = floatTensor(place(batch[fields[i]]!, batch, bucket, 1, 'float32'), [bucket.batch, bucket.seqLen]);
    });
    const fetches: Record<string, Tensor | null> = { metrics: null };
    for (const kind of ['params', 'm', 'v'] as const) Object.assign(fetches, packedFeeds(`new_${kind}`, spare[kind]));
    const out = await prog.session.run(only(prog.session, feeds), fetches);
    const values = out.metrics.data as Float32Array;
    const metrics = Object.fromEntries(prog.metricNames.map((n, i) => [n, values[i]]));
    this.spare = { params: this.params, ...this.moments };
    [this.params, this.moments] = [spare.params, { m: spare.m, v: spare.v }];
    if (metrics.skipped === 0) this.step++;
    return metrics;
  }

  score(batch: SequenceBatch, temperature = 1): Promise<ScoreResult> {
    return this.exclusive(() => this.runScore(batch, temperature));
  }

  private async runScore(batch: SequenceBatch, temperature: number): Promise<ScoreResult> {
    checkBatch(batch);
    const bucket = this.bucket(batch);
    const session = await this.programs.score(bucket);
    const feeds = { ...this.sequenceFeeds(batch, bucket, temperature), ...weightFeeds(this.layout, this.params) };
    const out = await session.run(only(session, feeds));
    const back = (name: string) => unshift(out[name].data as Float32Array, bucket, batch);
    return this.role === 'critic' ? { values: back('values') } : { logprobs: back('logprobs'), entropy: back('entropy') };
  }

  async generate(req: GenerateRequest): Promise<Generation[]> {
    if (this.role !== 'actor') throw new ConfigError('role', 'only an actor generates');
    return this.exclusive(() => generate(this.programs, weightFeeds(this.layout, this.params), req, this.options.tokenizer));
  }

  close(): Promise<void> {
    return this.exclusive(() => this.programs.release());
  }

  private bucket(b: SequenceBatch) {
    return bucketFor(b, this.options.seqMultiple ?? 32, this.options.batchMultiple ?? 1);
  }

  private sequenceFeeds(batch: SequenceBatch, bucket: Bucket, temperature = 1): Record<string, Tensor> {
    const shape = [bucket.batch, bucket.seqLen];
    const mask = place(batch.attentionMask, batch, bucket, 0, 'float32');
    return {
      tokens: tensor('int64', shape, placeInt(batch.tokens, batch, bucket, 0)),
      targets: tensor('int64', shape, placeInt(batch.tokens, batch, bucket, 1)),
      positions: tensor('int64', shape, positionsOf(mask, bucket.batch, bucket.seqLen)),
      attention_mask: floatTensor(mask, shape),
      inv_temperature: scalarTensor(1 / temperature, 'float32'),
    };
  }
}

/** The feeds a session declares (programs differ: a critic has no targets or temperature). */
function only(session: Session, feeds: Record<string, Tensor>): Record<string, Tensor> {
  return Object.fromEntries(session.inputNames.map((n) => [n, feeds[n]]));
}

/** One zero-copy tensor per parameter view (`w.<key>`), over the packed buffers. */
export function weightFeeds(layout: Layout, p: Packed): Record<string, Tensor> {
  const view = (v: Layout['views'][number]) => floatTensor(p[v.group].subarray(v.offset, v.offset + v.size), v.shape);
  return Object.fromEntries(layout.views.map((v) => [`w.${v.key}`, view(v)]));
}

export function packedFeeds(prefix: string, p: Packed): Record<string, Tensor> {
  return Object.fromEntries(GROUPS.map((g) => [`${prefix}_${g}`, floatTensor(p[g], [p[g].length])]));
}
