/**
 * Serialises a Graph to ONNX ModelProto bytes with onnx-proto (the old onnx.proto: attribute strings
 * are Uint8Array). Only nodes and initializers that outputs depend on are written; graph inputs are
 * all kept because callers feed them by name, except those `bake` gives data for, which are written as
 * initializers (onnxruntime then prepacks them once per session). Node order is creation order, which is
 * topological.
 */
import onnxProto from 'onnx-proto';
import { type AttrValue, type Graph, GraphError, type Node, type TensorData, type Value, sizeOf } from './graph.ts';
import { ONNX_DTYPE } from './ops.ts';

const { onnx } = onnxProto;
export const OPSET = 23; // RMSNormalization

/** Internal op names that serialise as a standard op. */
const ONNX_OP: Readonly<Record<string, string>> = { StopGradient: 'Identity' };

function valueInfo(v: Value): onnxProto.onnx.IValueInfoProto {
  const shape = { dim: v.shape.map((d) => ({ dimValue: d })) };
  return { name: v.name, type: { tensorType: { elemType: ONNX_DTYPE[v.dtype], shape } } };
}

function attribute(name: string, a: AttrValue): onnxProto.onnx.IAttributeProto {
  const T = onnx.AttributeProto.AttributeType;
  if (typeof a === 'number') return { name, type: T.INT, i: a };
  if (typeof a === 'string') return { name, type: T.STRING, s: new TextEncoder().encode(a) };
  if (Array.isArray(a)) return { name, type: T.INTS, ints: [...a] };
  return { name, type: T.FLOAT, f: (a as { float: number }).float };
}

function tensorProto(v: Value, data: TensorData): onnxProto.onnx.ITensorProto {
  const rawData = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  return { name: v.name, dims: [...v.shape], dataType: ONNX_DTYPE[v.dtype], rawData };
}

/** Nodes the outputs depend on, in creation (= topological) order; iterative, no recursion. */
export function liveNodes(graph: Graph): Node[] {
  const live = new Set<Node>();
  const stack = graph.outputs.map((v) => v.node).filter((n): n is Node => n !== null);
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (live.has(n)) continue;
    live.add(n);
    for (const x of n.inputs) if (x?.node) stack.push(x.node);
  }
  return graph.nodes.filter((n) => live.has(n));
}

/** Version of onnxruntime's own operator domain (MatMulNBits). */
const MICROSOFT_OPSET = 1;

export function toOnnx(graph: Graph, name = 'starpo', bake: ReadonlyMap<string, TensorData> = new Map()): Uint8Array {
  if (graph.outputs.length === 0) throw new GraphError('graph has no outputs');
  const nodes = liveNodes(graph);
  const used = new Set<Value>(graph.outputs);
  for (const n of nodes) for (const x of n.inputs) if (x) used.add(x);
  for (const key of bake.keys())
    if (!graph.inputs.some((v) => v.name === key)) throw new GraphError(`bake: ${key} is not an input of the graph`);
  const baked = graph.inputs.filter((v) => bake.has(v.name));
  for (const v of baked)
    if (bake.get(v.name)!.length !== sizeOf(v.shape))
      throw new GraphError(`bake: ${bake.get(v.name)!.length} values for ${v.name} [${v.shape}]`);
  const domains = new Set(nodes.map((n) => n.domain).filter((d) => d !== ''));
  const proto = onnx.ModelProto.create({
    irVersion: 10,
    producerName: 'starpo',
    opsetImport: [
      { domain: '', version: OPSET },
      ...[...domains].map((domain) => ({ domain, version: MICROSOFT_OPSET })),
    ],
    graph: {
      name,
      input: graph.inputs.filter((v) => !bake.has(v.name)).map(valueInfo),
      output: graph.outputs.map(valueInfo),
      initializer: [
        ...graph.initializers.filter((i) => used.has(i.value)).map((i) => tensorProto(i.value, i.data)),
        ...baked.map((v) => tensorProto(v, bake.get(v.name)!)),
      ],
      node: nodes.map((n) => ({
        name: n.name,
        opType: ONNX_OP[n.op] ?? n.op,
        domain: n.domain,
        input: n.inputs.map((x) => x?.name ?? ''),
        output: n.outputs.map((v) => v.name),
        attribute: Object.entries(n.attrs).map(([k, a]) => attribute(k, a)),
      })),
    },
  });
  return onnx.ModelProto.encode(proto).finish();
}
