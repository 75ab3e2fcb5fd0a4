/**
 * Running train_step: one fused program when the mini-batch's attention fits the memory budget,
 * else micro-batches through the `grad` program (accumulating into a scratch gradient) and one
 * `apply` program. Either way the new params and moments land in the caller's spare buffers.
 */
import { GROUPS, type Layout, groupsOf } from '../model/layout.ts';
import { type Packed, zerosLike } from '../model/params.ts';
import { DEFAULT_ADAMW } from '../programs/adamw.ts';
import { type Bucket, LOSS_FIELDS, type TrainBatch, rowCalls, sliceRows, trainNorm } from '../programs/batch.ts';
import { type HeadRows, withHeadRows } from '../programs/head-rows.ts';
import { lossDef } from '../programs/loss.ts';
import { type Feeds, only, packedFeeds, rowFeed, sequenceFeeds, weightFeeds } from './feeds.ts';
import type { TrainMetrics } from './handle.ts';
import type { TrainStepOptions } from './handle.ts';
import type { ProgramCache, TrainProgram } from './programs.ts';
import { type OrtTensor, floatTensor, scalarTensor } from './session.ts';

export interface OptimizerBuffers {
  params: Packed;
  m: Packed;
  v: Packed;
}

export interface TrainContext {
  readonly layout: Layout;
  /** With LoRA, the frozen base weights (read, never written); else null. */
  readonly frozen: Packed | null;
  readonly programs: ProgramCache;
  /** Rows per micro-batch (a power of two), or the whole bucket when it fits. */
  readonly rows: number;
  /** An actor's LM head runs on the trained positions only (PolicyOptions.headRows; programs/head-rows.ts). */
  readonly heads: boolean;
  /**
   * Two gradient accumulators (micro-batch step) or one gradient buffer (in-place step), kept by
   * the caller across steps, allocated on first use.
   */
  readonly scratch: { acc?: [Packed, Packed]; grads?: Packed };
}

/**
 * A (micro-)batch's program shape: `bucket`, with the LM head on the trained positions when the context says so and
 * that pays (programs/head-rows.ts), and those positions.
 */
function callShape(
  ctx: TrainContext,
  part: TrainBatch,
  bucket: Bucket,
  loss: TrainStepOptions['loss'],
): { shape: Bucket; heads: HeadRows | null } {
  return withHeadRows(ctx.heads && lossDef(loss).head === 'lm' ? part.lossMask : null, part, bucket);
}

/** Feeds of one (micro-)batch: sequences, loss mask and the loss's inputs, with whole-batch denominators. */
function batchFeeds(
  batch: TrainBatch,
  { shape: bucket, heads }: { shape: Bucket; heads: HeadRows | null },
  opts: TrainStepOptions,
  norm: { tokens: number; sequences: number },
): Feeds {
  const feeds: Feeds = {
    ...sequenceFeeds(batch, bucket, opts.temperature, heads),
    loss_mask: rowFeed(batch.lossMask, batch, bucket),
    token_count: scalarTensor(norm.tokens, 'float32'),
    sequence_count: scalarTensor(norm.sequences, 'float32'),
  };
  for (const name of lossDef(opts.loss).inputs(opts.loss)) {
    feeds[name] = rowFeed(batch[LOSS_FIELDS[name as keyof typeof LOSS_FIELDS]]!, batch, bucket);
  }
  return feeds;
}

function optimizerFeeds(state: OptimizerBuffers, spare: OptimizerBuffers, lr: number, step: number) {
  const feeds: Feeds = {
    ...packedFeeds('params', state.params),
    ...packedFeeds('m', state.m),
    ...packedFeeds('v', state.v),
    lr: scalarTensor(lr, 'float32'),
    step: scalarTensor(step, 'float32'),
  };
  const fetches: Record<string, OrtTensor | null> = { metrics: null };
  for (const kind of ['params', 'm', 'v'] as const) Object.assign(fetches, packedFeeds(`new_${kind}`, spare[kind]));
  return { feeds, fetches };
}

async function runProgram(
  prog: TrainProgram,
  feeds: Feeds,
  fetches: Record<string, OrtTensor | null>,
): Promise<TrainMetrics> {
  const out = await prog.session.run(only(prog.session, feeds), fetches);
  const values = out.metrics.data as Float32Array;
  return Object.fromEntries(prog.metricNames.map((n, i) => [n, values[i]]));
}

/** One optimizer step from `state` into `spare` (step is 1-based); returns the metrics. */
export async function trainStep(
  ctx: TrainContext,
  state: OptimizerBuffers,
  spare: OptimizerBuffers,
  step: number,
  batch: TrainBatch,
  bucket: Bucket,
  opts: TrainStepOptions,
): Promise<TrainMetrics> {
  const optim = opts.optim ?? DEFAULT_ADAMW;
  const norm = trainNorm(batch);
  const { feeds, fetches } = optimizerFeeds(state, spare, opts.lr, step);
  if (ctx.rows >= bucket.batch) {
    const call = callShape(ctx, batch, bucket, opts.loss);
    const prog = await ctx.programs.train(call.shape, opts.loss, optim);
    return runProgram(
      prog,
      { ...feeds, ...weightFeeds(ctx.layout, state.params, ctx.frozen), ...batchFeeds(batch, call, opts, norm) },
      fetches,
    );
  }
  const { grads, metrics } = await accumulate(ctx, state.params, batch, bucket, opts, norm);
  const applied = await runProgram(
    await ctx.programs.apply(optim),
    { ...feeds, ...packedFeeds('grad', grads) },
    fetches,
  );
  const { tokens, ...rest } = metrics;
  return { ...rest, ...applied, tokens };
}

/** Sums micro-batch gradients and metrics (each already divided by the whole-batch denominators). */
async function accumulate(
  ctx: TrainContext,
  params: Packed,
  batch: TrainBatch,
  bucket: Bucket,
  opts: TrainStepOptions,
  norm: { tokens: number; sequences: number },
): Promise<{ grads: Packed; metrics: TrainMetrics }> {
  let [acc, next] = (ctx.scratch.acc ??= [zerosLike(ctx.layout), zerosLike(ctx.layout)]);
  for (const g of GROUPS) acc[g].fill(0);
  const metrics: TrainMetrics = {};
  const weights = weightFeeds(ctx.layout, params, ctx.frozen);
  for (const [start, rows] of rowCalls(batch.batch, ctx.rows)) {
    const part = sliceRows(batch, start, rows);
    const call = callShape(ctx, part, { ...bucket, batch: rows }, opts.loss);
    const prog = await ctx.programs.grad(call.shape, opts.loss);
    const feeds = { ...weights, ...packedFeeds('acc', acc), ...batchFeeds(part, call, opts, norm) };
    const m = await runProgram(prog, feeds, { metrics: null, ...packedFeeds('new_acc', next) });
    for (const [k, v] of Object.entries(m)) metrics[k] = (metrics[k] ?? 0) + v;
    [acc, next] = [next, acc];
  }
  return { grads: acc, metrics };
}

/** Floats per chunk of the in-place optimizer: 16 MB per operand, a few temporaries of that size per call. */
export const OPTIMIZER_CHUNK = 1 << 22;

/** Chunks [offset, size) covering n floats: full chunks, then one remainder. */
function chunks(n: number, size: number): [number, number][] {
  const out: [number, number][] = [];
  for (let at = 0; at < n; at += size) out.push([at, Math.min(size, n - at)]);
  return out;
}

/** Width of the rows whose sums of squares onnxruntime takes (then added here in float64). */
const SUM_WIDTH = 1024;

/** Σ x² in float64 over float32 row sums of [rows, 1024] chunks (onnxruntime) and a tail of < 1024 (here). */
async function sumSquares(programs: ProgramCache, x: Float32Array): Promise<number> {
  let sum = 0;
  const whole = x.length - (x.length % SUM_WIDTH);
  for (const [at, n] of chunks(whole, OPTIMIZER_CHUNK)) {
    const session = await programs.sumSquares(n / SUM_WIDTH, SUM_WIDTH);
    const out = await session.run({ g: floatTensor(x.subarray(at, at + n), [n / SUM_WIDTH, SUM_WIDTH]) });
    for (const r of out.sum_squares.data as Float32Array) sum += r;
  }
  for (let i = whole; i < x.length; i++) sum += x[i] * x[i];
  return sum;
}

/** Zero-copy tensors over each trained view's place in a packed buffer, by `<prefix>.<key>`. */
function viewTensors(layout: Layout, p: Packed, prefix: string): Record<string, OrtTensor> {
  return Object.fromEntries(
    layout.views.map((v) => [
      `${prefix}.${v.key}`,
      floatTensor(p[v.group].subarray(v.offset, v.offset + v.size), v.shape),
    ]),
  );
}

/**
 * The in-place optimizer for large models: the step needs params, moments and one gradient buffer and no
 * second copy of any (the one-graph and micro-batch steps hold a spare set of params and moments, two
 * gradient accumulators, and the packed gradient and AdamW's temporaries over whole groups in-graph).
 *   1. per (micro-)batch, the `viewGrad` program writes each view's gradient into its place in `grads`
 *      (later micro-batches add to it in place);
 *   2. Σ g² over `grads` in chunks (summed in float64 here) gives the norm; a non-finite norm returns
 *      skipped: 1 before anything is written, so params and moments keep their values;
 *   3. AdamW runs chunk by chunk with each output bound to its input's memory.
 * Results equal the one-graph step's up to the norm's summation order (float32 rounding).
 */
export async function trainStepInPlace(
  ctx: TrainContext,
  state: OptimizerBuffers,
  grads: Packed,
  step: number,
  batch: TrainBatch,
  bucket: Bucket,
  opts: TrainStepOptions,
): Promise<TrainMetrics> {
  const optim = opts.optim ?? DEFAULT_ADAMW;
  const norm = trainNorm(batch);
  const weights = weightFeeds(ctx.layout, state.params, ctx.frozen);
  const metrics: TrainMetrics = {};
  const views = viewTensors(ctx.layout, grads, 'grad');
  for (const [start, rows] of rowCalls(batch.batch, ctx.rows)) {
    const part = rows >= batch.batch ? batch : sliceRows(batch, start, rows);
    const call = callShape(ctx, part, { ...bucket, batch: rows }, opts.loss);
    const prog = await ctx.programs.viewGrad(call.shape, opts.loss, start > 0);
    const feeds = {
      ...weights,
      ...(start > 0 ? viewTensors(ctx.layout, grads, 'acc') : {}),
      ...batchFeeds(part, call, opts, norm),
    };
    const m = await runProgram(prog, feeds, { metrics: null, ...views });
    for (const [k, v] of Object.entries(m)) metrics[k] = (metrics[k] ?? 0) + v;
  }
  let squares = 0;
  for (const g of groupsOf(ctx.layout)) squares += await sumSquares(ctx.programs, grads[g]);
  const gradNorm = Math.sqrt(squares);
  const { tokens, ...rest } = metrics;
  if (!Number.isFinite(gradNorm)) return { ...rest, grad_norm: gradNorm, skipped: 1, tokens };
  const scalars = {
    lr: scalarTensor(opts.lr, 'float32'),
    step: scalarTensor(step, 'float32'),
    grad_norm: scalarTensor(gradNorm, 'float32'),
  };
  for (const g of groupsOf(ctx.layout)) {
    const decay = scalarTensor(g === 'matrices' ? optim.weightDecay : 0, 'float32');
    for (const [at, n] of chunks(grads[g].length, OPTIMIZER_CHUNK)) {
      const session = await ctx.programs.adamwChunk(n, optim);
      const [p, m, v] = [state.params, state.m, state.v].map((x) => floatTensor(x[g].subarray(at, at + n), [n]));
      await session.run(
        { p, m, v, g: floatTensor(grads[g].subarray(at, at + n), [n]), ...scalars, decay_rate: decay },
        { new_p: p, new_m: m, new_v: v },
      );
    }
  }
  return { ...rest, grad_norm: Math.fround(gradNorm), skipped: 0, tokens };
}
