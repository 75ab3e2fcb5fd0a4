/**
 * Running train_step: one fused program when the mini-batch's attention fits the memory budget,
 * else micro-batches through the `grad` program (accumulating into a scratch gradient) and one
 * `apply` program. Either way the new params and moments land in the caller's spare buffers.
 */
import { GROUPS, type Layout } from '../model/layout.ts';
import { type Packed, zerosLike } from '../model/params.ts';
import { DEFAULT_ADAMW } from '../programs/adamw.ts';
import { type Bucket, LOSS_FIELDS, type TrainBatch, sliceRows, trainNorm } from '../programs/batch.ts';
import { lossDef } from '../programs/loss.ts';
import { type Feeds, only, packedFeeds, rowFeed, sequenceFeeds, weightFeeds } from './feeds.ts';
import type { TrainMetrics, TrainStepOptions } from './policy.ts';
import type { ProgramCache, TrainProgram } from './programs.ts';
import { type Tensor, scalarTensor } from './session.ts';

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
  /** Two gradient accumulators, kept by the caller across steps, allocated on first use. */
  readonly scratch: { acc?: [Packed, Packed] };
}

/** Feeds of one (micro-)batch: sequences, loss mask and the loss's inputs, with whole-batch denominators. */
function batchFeeds(batch: TrainBatch, bucket: Bucket, opts: TrainStepOptions, norm: { tokens: number; sequences: number }): Feeds {
  const feeds: Feeds = {
    ...sequenceFeeds(batch, bucket, opts.temperature),
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
    ...packedFeeds('params', state.params), ...packedFeeds('m', state.m), ...packedFeeds('v', state.v),
    lr: scalarTensor(lr, 'float32'), step: scalarTensor(step, 'float32'),
  };
  const fetches: Record<string, Tensor | null> = { metrics: null };
  for (const kind of ['params', 'm', 'v'] as const) Object.assign(fetches, packedFeeds(`new_${kind}`, spare[kind]));
  return { feeds, fetches };
}

async function runProgram(prog: TrainProgram, feeds: Feeds, fetches: Record<string, Tensor | null>): Promise<TrainMetrics> {
  const out = await prog.session.run(only(prog.session, feeds), fetches);
  const values = out.metrics.data as Float32Array;
  return Object.fromEntries(prog.metricNames.map((n, i) => [n, values[i]]));
}

/** One optimizer step from `state` into `spare` (step is 1-based); returns the metrics. */
export async function trainStep(
  ctx: TrainContext, state: OptimizerBuffers, spare: OptimizerBuffers, step: number, batch: TrainBatch, bucket: Bucket,
  opts: TrainStepOptions,
): Promise<TrainMetrics> {
  const optim = opts.optim ?? DEFAULT_ADAMW;
  const norm = trainNorm(batch);
  const { feeds, fetches } = optimizerFeeds(state, spare, opts.lr, step);
  if (ctx.rows >= bucket.batch) {
    const prog = await ctx.programs.train(bucket, opts.loss, optim);
    return runProgram(prog, { ...feeds, ...weightFeeds(ctx.layout, state.params, ctx.frozen), ...batchFeeds(batch, bucket, opts, norm) }, fetches);
  }
  const { grads, metrics } = await accumulate(ctx, state.params, batch, bucket, opts, norm);
  const applied = await runProgram(await ctx.programs.apply(optim), { ...feeds, ...packedFeeds('grad', grads) }, fetches);
  const { tokens, ...rest } = metrics;
  return { ...rest, ...applied, tokens };
}

/** Sums micro-batch gradients and metrics (each already divided by the whole-batch denominators). */
async function accumulate(
  ctx: TrainContext, params: Packed, batch: TrainBatch, bucket: Bucket, opts: TrainStepOptions, norm: { tokens: number; sequences: number },
): Promise<{ grads: Packed; metrics: TrainMetrics }> {
  const micro = { batch: ctx.rows, seqLen: bucket.seqLen };
  const prog = await ctx.programs.grad(micro, opts.loss);
  let [acc, next] = (ctx.scratch.acc ??= [zerosLike(ctx.layout), zerosLike(ctx.layout)]);
  for (const g of GROUPS) acc[g].fill(0);
  const metrics: TrainMetrics = {};
  const weights = weightFeeds(ctx.layout, params, ctx.frozen);
  for (let start = 0; start < batch.batch; start += ctx.rows) {
    const part = sliceRows(batch, start, ctx.rows);
    const feeds = { ...weights, ...packedFeeds('acc', acc), ...batchFeeds(part, micro, opts, norm) };
    const m = await runProgram(prog, feeds, { metrics: null, ...packedFeeds('new_acc', next) });
    for (const [k, v] of Object.entries(m)) metrics[k] = (metrics[k] ?? 0) + v;
    [acc, next] = [next, acc];
  }
  return { grads: acc, metrics };
}
