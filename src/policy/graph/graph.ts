/**
 * A small typed builder for ONNX graphs with static shapes.
 *
 * Every value carries its dtype and concrete shape (programs are compiled per shape bucket, so no
 * symbolic dimensions are needed), which is what lets the autodiff un-broadcast gradients and the
 * op functions check their arguments while the graph is built instead of when onnxruntime loads it.
 * Names are counter-based (`t17`, `n17_MatMul`) so the same build gives byte-identical models.
 */
import { StarpoError } from '../../errors.ts';
import { DEFAULT_PROGRAM_OPTIONS, type ProgramOptions } from './program-options.ts';

export type FloatDType = 'float32' | 'float64';
export type DType = FloatDType | 'int64' | 'int32' | 'uint8' | 'bool';
export type Shape = readonly number[];

/** An ONNX attribute: numbers are INT, number arrays INTS, strings STRING; floats must be wrapped. */
export type AttrValue = number | readonly number[] | string | { readonly float: number };
export type Attrs = Readonly<Record<string, AttrValue>>;

export type TensorData = Float32Array | Float64Array | BigInt64Array | Int32Array | Uint8Array;

/** Thrown when a graph is built wrongly (shape mismatch, unknown value, missing gradient rule). */
export class GraphError extends StarpoError {}

export class Value {
  constructor(
    readonly graph: Graph,
    public name: string,
    readonly dtype: DType,
    readonly shape: Shape,
    /** The node that computes this value; null for graph inputs and initializers. */
    readonly node: Node | null,
  ) {}
  get rank(): number {
    return this.shape.length;
  }
  get size(): number {
    return this.shape.reduce((a, b) => a * b, 1);
  }
  toString(): string {
    return `${this.name}:${this.dtype}[${this.shape.join(',')}]`;
  }
}

export interface Node {
  readonly id: number;
  readonly name: string;
  readonly op: string;
  readonly domain: string;
  readonly inputs: readonly (Value | null)[];
  readonly outputs: Value[];
  readonly attrs: Attrs;
}

/**
 * The backward of a composite (jax's custom_vjp): given the upstream gradient of the composite's
 * output, the gradients of its declared inputs (null = none). The autodiff uses it instead of
 * differentiating the composite's internal nodes one by one.
 */
export interface CustomGradient {
  readonly inputs: readonly Value[];
  readonly rule: (g: Value) => readonly (Value | null)[];
}

export interface Initializer {
  readonly value: Value;
  readonly data: TensorData;
}

export interface OutSpec {
  readonly dtype: DType;
  readonly shape: Shape;
}

export function sizeOf(shape: Shape): number {
  return shape.reduce((a, b) => a * b, 1);
}

export class Graph {
  readonly inputs: Value[] = [];
  readonly initializers: Initializer[] = [];
  readonly nodes: Node[] = [];
  readonly outputs: Value[] = [];
  private counter = 0;
  private readonly constants = new Map<string, Value>();
  private constantCount = 0;
  private readonly names = new Set<string>();
  private readonly data = new Map<Value, TensorData>();
  private readonly customGradients = new Map<Node, CustomGradient>();

  /**
   * `float` is the dtype model code uses for activations and constants (float64 for gradient checks);
   * `options` are the kernel and gradient choices the model code and the gradient rules build with.
   */
  constructor(
    readonly float: FloatDType = 'float32',
    readonly options: ProgramOptions = DEFAULT_PROGRAM_OPTIONS,
  ) {}

  input(name: string, dtype: DType, shape: Shape): Value {
    const v = new Value(this, this.claim(name), dtype, shape, null);
    this.inputs.push(v);
    return v;
  }

  initializer(name: string, dtype: DType, shape: Shape, data: TensorData): Value {
    if (data.length !== sizeOf(shape))
      throw new GraphError(`initializer ${name}: ${data.length} values for [${shape}]`);
    const v = new Value(this, this.claim(name), dtype, shape, null);
    this.initializers.push({ value: v, data });
    this.data.set(v, data);
    return v;
  }

  /** The contents of an initializer (e.g. a Slice bound a gradient rule needs), else undefined. */
  valueOf(v: Value): number[] | undefined {
    const d = this.data.get(v);
    return d === undefined ? undefined : Array.from(d as ArrayLike<number | bigint>, Number);
  }

  /** A constant initializer; small ones (scalars, axes, shapes) are deduplicated by value. */
  constant(values: ArrayLike<number>, dtype: DType, shape: Shape): Value {
    const key = values.length <= 1024 ? `${dtype}|${shape.join(',')}|${Array.from(values).join(',')}` : null;
    const hit = key === null ? undefined : this.constants.get(key);
    if (hit) return hit;
    const v = this.initializer(`c${this.constantCount++}`, dtype, shape, typedArray(dtype, values));
    if (key !== null) this.constants.set(key, v);
    return v;
  }

  /** A scalar constant in the graph's float dtype (or the one given). */
  scalar(x: number, dtype: DType = this.float): Value {
    return this.constant([x], dtype, []);
  }

  /** A 1-D int64 constant (axes, shapes, slice bounds). */
  ints(xs: readonly number[]): Value {
    return this.constant(xs, 'int64', [xs.length]);
  }

  node(op: string, inputs: readonly (Value | null)[], attrs: Attrs, outs: readonly OutSpec[], domain = ''): Value[] {
    for (const x of inputs)
      if (x && x.graph !== this) throw new GraphError(`${op}: input ${x.name} is from another graph`);
    const id = this.counter++;
    const name = (i: number) => this.claim(outs.length === 1 ? `t${id}` : `t${id}_${i}`);
    const outputs = outs.map((o, i) => new Value(this, name(i), o.dtype, o.shape, null));
    const node: Node = { id, name: `n${id}_${op}`, op, domain, inputs, outputs, attrs };
    // Values are created before their node exists; attach it (Value.node is readonly to callers only).
    for (const v of outputs) (v as { node: Node | null }).node = node;
    this.nodes.push(node);
    return outputs;
  }

  /**
   * Declares `out` (the last node of a composite) differentiable in `inputs` by `rule`: the rule must
   * cover every path from those inputs to `out`, since the composite's inner nodes receive no gradient.
   */
  defineGradient(out: Value, inputs: readonly Value[], rule: CustomGradient['rule']): Value {
    if (!out.node || out.graph !== this) throw new GraphError(`defineGradient: ${out} is not computed in this graph`);
    this.customGradients.set(out.node, { inputs, rule });
    return out;
  }

  customGradient(n: Node): CustomGradient | undefined {
    return this.customGradients.get(n);
  }

  /** Marks a value as a graph output under `name` (the value is renamed; inputs get an Identity). */
  output(name: string, v: Value): Value {
    if (v.node === null || this.outputs.includes(v)) v = this.node('Identity', [v], {}, [v])[0];
    this.names.delete(v.name);
    v.name = this.claim(name);
    this.outputs.push(v);
    return v;
  }

  private claim(name: string): string {
    if (this.names.has(name)) throw new GraphError(`duplicate value name ${name}`);
    this.names.add(name);
    return name;
  }
}

export function typedArray(dtype: DType, values: ArrayLike<number>): TensorData {
  switch (dtype) {
    case 'float32':
      return Float32Array.from(values);
    case 'float64':
      return Float64Array.from(values);
    case 'int64':
      return BigInt64Array.from(Array.from(values, (x) => BigInt(x)));
    case 'int32':
      return Int32Array.from(values);
    case 'uint8':
      return Uint8Array.from(values);
    case 'bool':
      return Uint8Array.from(values, (x) => (x ? 1 : 0));
  }
}

export function isFloat(dtype: DType): dtype is FloatDType {
  return dtype === 'float32' || dtype === 'float64';
}
