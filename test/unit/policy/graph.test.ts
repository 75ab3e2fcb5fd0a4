import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { Graph, GraphError } from '../../../src/policy/graph/graph.ts';
import { toOnnx } from '../../../src/policy/graph/onnx.ts';
import * as o from '../../../src/policy/graph/ops.ts';
import { parseModelConfig } from '../../../src/policy/io/config.ts';
import { buildLayout } from '../../../src/policy/model/layout.ts';
import { DEFAULT_ADAMW } from '../../../src/policy/programs/adamw.ts';
import { STARPO_S_PPO } from '../../../src/policy/programs/loss.ts';
import { buildTrainGraph } from '../../../src/policy/programs/train.ts';

function small(): Graph {
  const g = new Graph();
  const x = g.input('x', 'float32', [2, 3]);
  const w = g.input('w', 'float32', [4, 3]);
  g.output('y', o.add(o.gemm(x, w, 0, 1), 1));
  return g;
}

test('nodes and values get counter-based names; constants are shared initializers', () => {
  const g = small();
  assert.deepEqual(
    g.nodes.map((n) => `${n.name}: ${n.inputs.map((v) => v?.name).join(', ')} -> ${n.outputs.map(String)}`),
    ['n0_Gemm: x, w -> t0:float32[2,4]', 'n1_Add: t0, c0 -> y:float32[2,4]'],
  );
  assert.equal(o.add(g.inputs[0], 1).node?.inputs[1], g.initializers[0].value);
});

test('building the same train_step twice gives byte-identical ONNX', () => {
  const config = parseModelConfig({
    model_type: 'qwen2',
    vocab_size: 9,
    hidden_size: 8,
    intermediate_size: 8,
    num_hidden_layers: 1,
    num_attention_heads: 2,
  });
  const hash = () => {
    const t = buildTrainGraph(buildLayout(config), { batch: 2, seqLen: 4, loss: STARPO_S_PPO, optim: DEFAULT_ADAMW });
    return createHash('sha256').update(toOnnx(t.graph)).digest('hex');
  };
  assert.equal(hash(), hash());
});

test('shape errors name the op and the operands', () => {
  const g = new Graph();
  const a = g.input('a', 'float32', [2, 3]);
  const b = g.input('b', 'float32', [4, 5]);
  assert.throws(
    () => o.matmul(a, b),
    (e: unknown) =>
      e instanceof GraphError && e.message === 'MatMul: inner dimensions differ (a:float32[2,3], b:float32[4,5])',
  );
  assert.throws(() => o.add(a, b), /Add: shapes do not broadcast/);
  assert.throws(() => o.reshape(a, [4, -1]), /Reshape: cannot reshape to \[4,-1\]/);
});
