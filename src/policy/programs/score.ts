/**
 * The score program: for padded sequences, per-row log-prob of the next token and the entropy of
 * its distribution (actor), or the value (critic). Rows are shifted back to token alignment by
 * the caller (batch.ts), exactly as train_step sees them, so scores equal train_step's inputs.
 */
import { type FloatDType, Graph } from '../graph/graph.ts';
import * as o from '../graph/ops.ts';
import type { ProgramOptions } from '../graph/program-options.ts';
import type { Layout } from '../model/layout.ts';
import { values, weightInputs } from '../model/transformer.ts';
import { encode, sequenceInputs, tokenStats } from './common.ts';
import type { TrainShape } from './train.ts';

export function buildScoreGraph(
  layout: Layout,
  s: TrainShape,
  float: FloatDType = 'float32',
  options?: ProgramOptions,
): Graph {
  const g = new Graph(float, options);
  const { batch: B, seqLen: T } = s;
  const model = weightInputs(g, layout);
  const critic = layout.role === 'critic';
  const seq = sequenceInputs(g, B, T, s.packed === true, critic ? undefined : s.heads);
  const hidden = encode(model, seq);
  if (critic) {
    g.output('values', o.reshape(values(model, hidden), [B, T]));
    return g;
  }
  const { logp, entropy } = tokenStats(model, hidden, g.input('targets', 'int64', [B, T]), true, seq.heads);
  g.output('logprobs', logp);
  g.output('entropy', entropy);
  return g;
}
