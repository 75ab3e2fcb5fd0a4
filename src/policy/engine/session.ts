/**
 * onnxruntime sessions: creation with the chosen execution provider and thread count, and small
 * helpers to move typed arrays in and out. Everything above this file is provider-agnostic.
 */
import os from 'node:os';
import ort from 'onnxruntime-node';
import { StarpoError } from '../../errors.ts';
import { type DType, Graph, type Shape, type TensorData } from '../graph/graph.ts';
import { neg } from '../graph/ops.ts';
import { toOnnx } from '../graph/onnx.ts';
import { providerHint } from '../../gpu/hint.ts';

export type Provider = 'cpu' | 'cuda' | 'webgpu';
export const PROVIDERS: readonly Provider[] = ['cpu', 'cuda', 'webgpu'];

export interface SessionOptions {
  /** Intra-op threads; default = the machine's cores (onnxruntime's MatMul scales with them). */
  readonly threads?: number;
  readonly provider?: Provider;
  /**
   * Let idle intra-op threads spin between ops (onnxruntime's own default). Off by default: on a machine shared
   * with anything else (a trainer, a second run, another tenant) spinning threads take the cores the busy ones
   * need, and decode lost 19–40% to it beside busy processes while gaining 2–12% when quiet (the engine README).
   */
  readonly spin?: boolean;
  /** Keep onnxruntime's CPU memory arena (default true; see Policy's `arena`). */
  readonly arena?: boolean;
}

/** Thrown when an execution provider cannot be used on this machine. */
export class ProviderError extends StarpoError {}

export type Session = ort.InferenceSession;
/** A tensor onnxruntime feeds and fetches (the weights on the host side are io/dtype.ts Tensor). */
export type OrtTensor = ort.Tensor;

export function defaultThreads(): number {
  return Math.max(1, os.availableParallelism?.() ?? os.cpus().length);
}

/**
 * Debugging aids, read where time and memory go (the engine README's 0.5B section, scripts/profile-step.ts):
 * STARPO_ORT_PROFILE=<prefix> writes onnxruntime's per-node profile (JSON, when the session is released) and
 * STARPO_ORT_OPTIMIZED=<prefix> its optimised graph (.onnx) for every session, under that prefix. Separate
 * because serialising a 0.5B model's optimised graph holds another copy of its weights.
 */
let optimized = 0;
function profiling(): Partial<ort.InferenceSession.SessionOptions> {
  const profile = process.env.STARPO_ORT_PROFILE;
  const graph = process.env.STARPO_ORT_OPTIMIZED;
  return {
    ...(profile ? { enableProfiling: true, profileFilePrefix: profile } : {}),
    ...(graph ? { optimizedModelFilePath: `${graph}_${process.pid}_${optimized++}.onnx` } : {}),
  };
}

export async function createSession(model: Graph | Uint8Array, opts: SessionOptions = {}): Promise<Session> {
  const bytes = model instanceof Uint8Array ? model : toOnnx(model);
  const provider = opts.provider ?? 'cpu';
  if (!PROVIDERS.includes(provider)) {
    throw new ProviderError(`unknown execution provider "${provider}" (use ${PROVIDERS.join(', ')})`);
  }
  const options: ort.InferenceSession.SessionOptions = {
    executionProviders: [provider],
    intraOpNumThreads: opts.threads ?? defaultThreads(),
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
    enableCpuMemArena: opts.arena ?? true,
    ...profiling(),
    // Parallel loops hand out shrinking blocks instead of one per thread, so a thread delayed by another
    // process does not hold up the rest: train_step 1-2% faster on this shared 2-core machine (4 runs).
    extra: { session: { intra_op: { allow_spinning: opts.spin === true ? '1' : '0' }, dynamic_block_base: '4' } },
  };
  try {
    return await ort.InferenceSession.create(bytes, options);
  } catch (err) {
    if (provider === 'cpu') throw err;
    // Never a fallback to the CPU: the error says which state the machine is in (src/gpu/status.ts).
    throw new ProviderError(`execution provider "${provider}" is unavailable: ${providerHint(provider, err)}`, {
      cause: err,
    });
  }
}

/** Fails fast (with the provider's hint) when an execution provider cannot run a one-node graph. */
export async function probeProvider(provider: Provider = 'cpu'): Promise<void> {
  const g = new Graph();
  g.output('y', neg(g.input('x', 'float32', [1])));
  const session = await createSession(g, { provider, threads: 1 });
  await session.release();
}

const ORT_TYPE: Record<DType, ort.Tensor.Type> = {
  float32: 'float32',
  float64: 'float64',
  int64: 'int64',
  int32: 'int32',
  uint8: 'uint8',
  bool: 'bool',
};

export function tensor(dtype: DType, shape: Shape, data: TensorData): OrtTensor {
  return new ort.Tensor(ORT_TYPE[dtype], data as never, [...shape]);
}

export function floatTensor(data: Float32Array | Float64Array, shape: Shape): OrtTensor {
  return tensor(data instanceof Float64Array ? 'float64' : 'float32', shape, data);
}

export function int64Tensor(data: ArrayLike<number>, shape: Shape): OrtTensor {
  return tensor('int64', shape, BigInt64Array.from(Array.from(data, (x) => BigInt(x))));
}

export function scalarTensor(x: number, dtype: DType): OrtTensor {
  if (dtype === 'int64') return int64Tensor([x], []);
  return tensor(dtype, [], dtype === 'float64' ? Float64Array.of(x) : Float32Array.of(x));
}

/** Runs a session; fetches are pre-allocated output tensors where given (written in place). */
export async function run(
  session: Session,
  feeds: Record<string, OrtTensor>,
  fetches?: Record<string, OrtTensor | null>,
): Promise<Record<string, OrtTensor>> {
  return (fetches ? session.run(feeds, fetches) : session.run(feeds)) as Promise<Record<string, OrtTensor>>;
}
