/**
 * The train_step program: ONE graph = forward + loss + backward + gradient clipping + AdamW.
 * Inputs: parameter views and the packed params and both Adam moments, the batch (tokens,
 * positions, attention mask, targets, loss mask, the loss's own per-token inputs, the mini-batch
 * denominators), lr and the 1-based step. Outputs: the new params and moments (written into
 * pre-allocated buffers by the runner) and a metrics vector.
 *
 * A mini-batch too large for memory (attention keeps B·H·T² scores per layer) is split into
 * micro-batches instead: a `grad` program adds each micro-batch's gradient into an accumulator,
 * and an `apply` program runs clipping + AdamW once. Denominators are fed for the whole
 * mini-batch, so the micro-batches sum to exactly the one-graph loss, metrics and gradient.
 */
import { grad } from '../autodiff/grad.ts';
import { type FloatDType, Graph, type Value } from '../graph/graph.ts';
import * as o from '../graph/ops.ts';
import type { ProgramOptions } from '../graph/program-options.ts';
import { type GroupName, type Layout, groupsOf } from '../model/layout.ts';
import { type Model, values, weightInputs } from '../model/transformer.ts';
import { type AdamWSpec, type Groups, adamw } from './adamw.ts';
import { encode, groupInputs, metricsVector, sequenceInputs, tokenStats } from './common.ts';
import { type LossSpec, entropyInLoss, lossDef } from './loss.ts';

export interface TrainShape {
  readonly batch: number;
  readonly seqLen: number;
  /** Rows are packed prefixes and segments (programs/prefix-pack.ts). */
  readonly packed?: boolean;
  /** The LM head runs on this many positions, the trained ones (programs/head-rows.ts); absent: on every one. */
  readonly heads?: number;
}

export interface TrainProgramSpec extends TrainShape {
  readonly loss: LossSpec;
  readonly optim: AdamWSpec;
  readonly float?: FloatDType;
  /** Kernel and gradient choices (default DEFAULT_PROGRAM_OPTIONS). */
  readonly options?: ProgramOptions;
}

export interface TrainGraph {
  readonly graph: Graph;
  /** Names of the loss's per-token float inputs (fed after the shift, see batch.ts). */
  readonly lossInputs: readonly string[];
  /** Names of the entries of the `metrics` output, in order. */
  readonly metricNames: readonly string[];
}

/** Forward + loss only, shared by the train programs and the gradient checks. */
export function buildLoss(g: Graph, model: Model, spec: TrainProgramSpec) {
  const { batch: B, seqLen: T } = spec;
  const def = lossDef(spec.loss);
  const seq = sequenceInputs(g, B, T, spec.packed === true, def.head === 'lm' ? spec.heads : undefined);
  const targets = g.input('targets', 'int64', [B, T]);
  const mask = g.input('loss_mask', g.float, [B, T]);
  const lossInputs = def.inputs(spec.loss);
  const inputs = Object.fromEntries(lossInputs.map((n) => [n, g.input(n, g.float, [B, T])]));
  const norm = { tokens: g.input('token_count', g.float, []), sequences: g.input('sequence_count', g.float, []) };
  const hidden = encode(model, seq);
  const head =
    def.head === 'lm'
      ? tokenStats(model, hidden, targets, entropyInLoss(spec.loss), seq.heads)
      : { values: o.reshape(values(model, hidden), [B, T]) };
  const { loss, metrics } = def.build(spec.loss, { ...head, mask, inputs, norm });
  return { loss, metrics, lossInputs, tokens: o.reduceSum(mask, [0, 1], false) };
}

/** Gradients of the views, concatenated in layout order into one flat gradient per group. */
function packedGrads(layout: Layout, grads: Value[]): Groups {
  const flat = (group: GroupName) => {
    const parts = layout.views.flatMap((v, i) => (v.group === group ? [o.reshape(grads[i], [v.size])] : []));
    return parts.length === 1 ? parts[0] : o.concat(parts, 0);
  };
  return Object.fromEntries(groupsOf(layout).map((group) => [group, flat(group)])) as Groups;
}

/**
 * With LoRA, `wrt` is the adapters (layout.views; the frozen base views are only inputs), so the
 * backward computes the activation gradients the adapters need and no gradient of a frozen weight:
 * rule nodes for those are built but dead, and dead nodes are not serialised (graph/onnx.ts).
 */
function lossAndGrads(g: Graph, layout: Layout, spec: TrainProgramSpec) {
  const model = weightInputs(g, layout);
  const { loss, metrics, lossInputs, tokens } = buildLoss(g, model, spec);
  const grads = packedGrads(
    layout,
    grad(
      loss,
      layout.views.map((v) => model.w[v.key]),
    ),
  );
  return { grads, lossInputs, metrics: { loss, ...metrics } as Record<string, Value>, tokens };
}

export function buildTrainGraph(layout: Layout, spec: TrainProgramSpec): TrainGraph {
  const g = new Graph(spec.float ?? 'float32', spec.options);
  const { grads, lossInputs, metrics, tokens } = lossAndGrads(g, layout, spec);
  // The packed params are fed twice over the same memory: as views (forward) and whole (update).
  const state = {
    params: groupInputs(g, layout, 'params'),
    m: groupInputs(g, layout, 'm'),
    v: groupInputs(g, layout, 'v'),
  };
  const next = adamw(state, grads, g.input('lr', g.float, []), g.input('step', g.float, []), spec.optim);
  for (const kind of ['params', 'm', 'v'] as const) {
    for (const group of groupsOf(layout)) g.output(`new_${kind}_${group}`, next[kind][group]);
  }
  const { names, vector } = metricsVector({ ...metrics, grad_norm: next.gradNorm, skipped: next.skipped, tokens });
  g.output('metrics', vector);
  return { graph: g, lossInputs, metricNames: names };
}

/** One micro-batch: `new_acc = acc + gradient`; metrics are this micro-batch's share of the sums. */
export function buildGradGraph(layout: Layout, spec: TrainProgramSpec): TrainGraph {
  const g = new Graph(spec.float ?? 'float32', spec.options);
  const { grads, lossInputs, metrics, tokens } = lossAndGrads(g, layout, spec);
  const acc = groupInputs(g, layout, 'acc');
  for (const group of groupsOf(layout)) g.output(`new_acc_${group}`, o.add(acc[group], grads[group]));
  const { names, vector } = metricsVector({ ...metrics, tokens });
  g.output('metrics', vector);
  return { graph: g, lossInputs, metricNames: names };
}

/**
 * One (micro-)batch's gradient per trained view, for the in-place optimizer (engine/train.ts): outputs
 * `grad.<key>` (the view's shape), which the runner binds to that view's place in one packed gradient
 * buffer, so no packed copy is made in-graph. With `accumulate`, each output is `acc.<key>` + the
 * gradient, and the runner binds input and output to the same memory (the Add is the input's only
 * reader). Metrics are this micro-batch's share of the sums, as buildGradGraph's.
 */
export function buildViewGradGraph(layout: Layout, spec: TrainProgramSpec, accumulate: boolean): TrainGraph {
  const g = new Graph(spec.float ?? 'float32', spec.options);
  const model = weightInputs(g, layout);
  const { loss, metrics, lossInputs, tokens } = buildLoss(g, model, spec);
  const grads = grad(
    loss,
    layout.views.map((v) => model.w[v.key]),
  );
  layout.views.forEach((v, i) =>
    g.output(`grad.${v.key}`, accumulate ? o.add(g.input(`acc.${v.key}`, g.float, v.shape), grads[i]) : grads[i]),
  );
  const { names, vector } = metricsVector({ loss, ...metrics, tokens });
  g.output('metrics', vector);
  return { graph: g, lossInputs, metricNames: names };
}

/** Clipping + AdamW on an accumulated gradient (inputs `grad_<group>`); metrics grad_norm, skipped. */
export function buildApplyGraph(layout: Layout, optim: AdamWSpec, float: FloatDType = 'float32'): TrainGraph {
  const g = new Graph(float);
  const state = {
    params: groupInputs(g, layout, 'params'),
    m: groupInputs(g, layout, 'm'),
    v: groupInputs(g, layout, 'v'),
  };
  const next = adamw(
    state,
    groupInputs(g, layout, 'grad'),
    g.input('lr', g.float, []),
    g.input('step', g.float, []),
    optim,
  );
  for (const kind of ['params', 'm', 'v'] as const) {
    for (const group of groupsOf(layout)) g.output(`new_${kind}_${group}`, next[kind][group]);
  }
  const { names, vector } = metricsVector({ grad_norm: next.gradNorm, skipped: next.skipped });
  g.output('metrics', vector);
  return { graph: g, lossInputs: [], metricNames: names };
}
