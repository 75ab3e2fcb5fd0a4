/**
 * The train_step program: ONE graph = forward + loss + backward + gradient clipping + AdamW.
 * Inputs: packed params and both Adam moments, the batch (tokens, positions, attention mask,
 * targets, loss mask, the loss's own per-token inputs), lr and the 1-based step. Outputs: the new
 * params and moments (written into pre-allocated buffers by the runner) and a metrics vector.
 */
import { grad } from '../autodiff/grad.ts';
import { type FloatDType, Graph, type Value } from '../graph/graph.ts';
import type { GroupName, Layout } from '../model/layout.ts';
import { type Model, lmLogits, values, weightInputs } from '../model/transformer.ts';
import { type AdamWSpec, type Groups, adamw } from './adamw.ts';
import { encode, groupInputs, metricsVector, sequenceInputs, temper, tokenStats } from './common.ts';
import { type LossSpec, lossDef } from './loss.ts';
import * as o from '../graph/ops.ts';

export interface TrainShape {
  readonly batch: number;
  readonly seqLen: number;
}

export interface TrainProgramSpec extends TrainShape {
  readonly loss: LossSpec;
  readonly optim: AdamWSpec;
  readonly float?: FloatDType;
}

export interface TrainGraph {
  readonly graph: Graph;
  /** Names of the loss's per-token float inputs (fed after the shift, see batch.ts). */
  readonly lossInputs: readonly string[];
  /** Names of the entries of the `metrics` output, in order. */
  readonly metricNames: readonly string[];
}

/** Forward + loss only, shared by train_step and the gradient checks: returns the loss and metrics. */
export function buildLoss(g: Graph, model: Model, spec: TrainProgramSpec) {
  const { batch: B, seqLen: T } = spec;
  const def = lossDef(spec.loss);
  const seq = sequenceInputs(g, B, T);
  const targets = g.input('targets', 'int64', [B, T]);
  const mask = g.input('loss_mask', g.float, [B, T]);
  const lossInputs = def.inputs(spec.loss);
  const inputs = Object.fromEntries(lossInputs.map((n) => [n, g.input(n, g.float, [B, T])]));
  const hidden = encode(model, seq);
  const head = def.head === 'lm'
    ? tokenStats(temper(lmLogits(model, hidden)), targets)
    : { values: o.reshape(values(model, hidden), [B, T]) };
  const { loss, metrics } = def.build(spec.loss, { ...head, mask, inputs });
  return { loss, metrics, lossInputs, tokens: o.reduceSum(mask, [0, 1], false) };
}

/** Gradients of the views, concatenated in layout order into one flat gradient per group. */
function packedGrads(layout: Layout, grads: Value[]): Groups {
  const flat = (group: GroupName) => {
    const parts = layout.views.flatMap((v, i) => (v.group === group ? [o.reshape(grads[i], [v.size])] : []));
    return parts.length === 1 ? parts[0] : o.concat(parts, 0);
  };
  return { matrices: flat('matrices'), vectors: flat('vectors') };
}

export function buildTrainGraph(layout: Layout, spec: TrainProgramSpec): TrainGraph {
  const g = new Graph(spec.float ?? 'float32');
  const model = weightInputs(g, layout);
  // The packed params are fed twice over the same memory: as views (forward) and whole (update).
  const state = { params: groupInputs(g, layout, 'params'), m: groupInputs(g, layout, 'm'), v: groupInputs(g, layout, 'v') };
  const { loss, metrics, lossInputs, tokens } = buildLoss(g, model, spec);
  const lr = g.input('lr', g.float, []);
  const step = g.input('step', g.float, []);
  const next = adamw(state, packedGrads(layout, grad(loss, layout.views.map((v) => model.w[v.key]))), lr, step, spec.optim);
  for (const kind of ['params', 'm', 'v'] as const) {
    for (const group of ['matrices', 'vectors'] as const) g.output(`new_${kind}_${group}`, next[kind][group]);
  }
  const all: Record<string, Value> = { loss, ...metrics, grad_norm: next.gradNorm, skipped: next.skipped, tokens };
  const { names, vector } = metricsVector(all);
  g.output('metrics', vector);
  return { graph: g, lossInputs, metricNames: names };
}
