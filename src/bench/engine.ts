/**
 * `starpo bench-engine`: how fast the policy engine runs here, as JSON lines on stdout.
 *   matmul_peak     best fp32 MatMul/Gemm GFLOP/s onnxruntime reaches on this machine
 *   train_step      tokens/s and achieved GFLOP/s of train_step for a ~3M-parameter model
 *                   (batch 16 × 128 tokens), and its ratio to matmul_peak (target >= 0.5)
 *   embedding_grad  one-hot Gemm vs ScatterElements(add) for the embedding gradient
 *   generate        tokens/s for 128 concurrent sequences, with the KV cache and without
 *   train_step_vs_pytorch  the same model and step in PyTorch (eager, and torch.compile when it works),
 *                   interleaved with ours in rounds, on the same threads and on one thread (CPU
 *                   seconds): seconds per step and speedups (> 1: starpo is faster)
 *                   (scripts/torch_train_step.py --serve; PyTorch from STARPO_TORCH_PYTHON or the venv
 *                   that scripts/install-torch.sh makes; skipped, saying so, when neither is there)
 * Timings take the best of several runs: the machine may be shared, and the best run is the
 * one least disturbed. Threads = cores (the engine default). Because a busy shared machine still
 * skews wall-clock ratios, matmul and train_step are also measured on one non-spinning thread in
 * CPU seconds (`gflopsPerCore`, `ratioToMatmulPeakPerCore`): the efficiency of the work itself.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { pickNames } from './name-list.ts';
import { Policy } from '../policy/engine/policy.ts';
import { createSession, defaultThreads, floatTensor, type Session, type OrtTensor } from '../policy/engine/session.ts';
import { grad } from '../policy/autodiff/grad.ts';
import { Graph } from '../policy/graph/graph.ts';
import * as o from '../policy/graph/ops.ts';
import { programOptions } from '../policy/graph/program-options.ts';
import { parseModelConfig, type ModelConfig } from '../policy/io/config.ts';
import { paramCount } from '../policy/model/layout.ts';
import { generateWithoutCache } from '../policy/engine/recompute.ts';
import { trainFlopsPerToken } from '../policy/model/flops.ts';

const emit = (line: Record<string, unknown>): void => void process.stdout.write(`${JSON.stringify(line)}\n`);
const round = (x: number, d = 1): number => Math.round(x * 10 ** d) / 10 ** d;

export interface Timing {
  /** Best and median wall-clock seconds per call. */
  readonly best: number;
  readonly median: number;
  /** Fewest process CPU seconds per call: with one non-spinning thread, the work itself, which
   * other processes on a shared machine barely disturb. */
  readonly cpu: number;
}

/** Times `fn` after `warmup` calls, over at least `runs` calls and `minSeconds`. */
export async function timeIt(fn: () => Promise<unknown>, runs = 5, warmup = 1, minSeconds = 0.5): Promise<Timing> {
  for (let i = 0; i < warmup; i++) await fn();
  const times: number[] = [];
  let cpu = Infinity;
  const start = performance.now();
  while (times.length < runs || (performance.now() - start) / 1000 < minSeconds) {
    const [t0, c0] = [performance.now(), process.cpuUsage()];
    await fn();
    const c = process.cpuUsage(c0);
    times.push((performance.now() - t0) / 1000);
    cpu = Math.min(cpu, (c.user + c.system) / 1e6);
  }
  times.sort((a, b) => a - b);
  return { best: times[0], median: times[Math.floor(times.length / 2)], cpu };
}

/** The ~3M-parameter model of the train_step benchmark: 4 layers of width 256, byte vocabulary. */
export const BENCH_MODEL: ModelConfig = parseModelConfig({
  model_type: 'qwen2',
  vocab_size: 256,
  hidden_size: 256,
  intermediate_size: 704,
  num_hidden_layers: 4,
  num_attention_heads: 4,
  num_key_value_heads: 4,
  tie_word_embeddings: true,
  max_position_embeddings: 1024,
});

const MATMULS = [
  [1024, 1024, 1024],
  [2048, 1024, 1024],
  [2048, 256, 768],
  [2048, 2048, 2048],
] as const;
const FORMS = ['MatMul', 'Gemm(transB)', 'MatMul(const B)'] as const;

/** One fp32 matrix product [m, k] · [k, n] in the given form, timed. */
type Form = (typeof FORMS)[number];
async function matmul([m, k, n]: readonly number[], form: Form, threads: number, spin: boolean): Promise<Timing> {
  const g = new Graph();
  const a = g.input('a', 'float32', [m, k]);
  const bData = new Float32Array(k * n).fill(0.01);
  const b =
    form === 'MatMul(const B)'
      ? g.initializer('b', 'float32', [k, n], bData)
      : g.input('b', 'float32', form === 'Gemm(transB)' ? [n, k] : [k, n]);
  g.output('c', form === 'Gemm(transB)' ? o.gemm(a, b, 0, 1) : o.matmul(a, b));
  const session = await createSession(g, { threads, spin });
  const feeds: Record<string, OrtTensor> = { a: floatTensor(new Float32Array(m * k).fill(0.01), [m, k]) };
  if (form !== 'MatMul(const B)') feeds.b = floatTensor(bData, b.shape);
  const fetch = { c: floatTensor(new Float32Array(m * n), [m, n]) };
  const t = await timeIt(() => session.run(feeds, fetch), 5, 2, 0.4);
  await session.release();
  return t;
}

/** Best GFLOP/s over shapes and forms: wall clock with `threads`, and per CPU-second on one thread. */
export async function matmulPeak(threads: number): Promise<{ wall: number; perCore: number }> {
  let [wall, perCore] = [0, 0];
  for (const shape of MATMULS) {
    for (const form of FORMS) {
      const flops = 2 * shape[0] * shape[1] * shape[2];
      const [t, one] = [await matmul(shape, form, threads, true), await matmul(shape, form, 1, false)];
      const [gflops, gflopsPerCore] = [flops / t.best / 1e9, flops / one.cpu / 1e9];
      emit({ bench: 'matmul', shape, form, threads, gflops: round(gflops), gflopsPerCore: round(gflopsPerCore) });
      [wall, perCore] = [Math.max(wall, flops / t.best / 1e9), Math.max(perCore, flops / one.cpu / 1e9)];
    }
  }
  emit({ bench: 'matmul_peak', threads, gflops: round(wall), gflopsPerCore: round(perCore) });
  return { wall, perCore };
}

/**
 * This machine's memory bandwidth in GB/s, best of 5, over a 1 GiB buffer (far past any cache): `read`, onnxruntime
 * summing it on `threads` threads (what a one-row decode step does to the weights), and `copy`, a memcpy in
 * JavaScript (bytes read plus bytes written, per second).
 */
export async function memoryBandwidth(threads: number): Promise<{ read: number; copy: number }> {
  const floats = 1 << 28;
  const src = new Float32Array(floats).fill(1);
  const dst = new Float32Array(floats);
  const copy = await timeIt(async () => dst.set(src), 5, 1, 0);
  const g = new Graph();
  g.output('sum', o.reduceSum(g.input('x', 'float32', [floats / 1024, 1024]), [1]));
  const session = await createSession(g, { threads });
  const fetch = { sum: floatTensor(new Float32Array(floats / 1024), [floats / 1024, 1]) };
  const read = await timeIt(() => session.run({ x: floatTensor(src, [floats / 1024, 1024]) }, fetch), 5, 1, 0);
  await session.release();
  const bytes = floats * 4;
  const line = { read: round(bytes / read.best / 1e9), copy: round((2 * bytes) / copy.best / 1e9) };
  emit({ bench: 'memory_bandwidth', threads, bytes, readGBs: line.read, copyGBs: line.copy });
  return line;
}

/** The benchmark's batch (16 × 128 tokens, every token trained) and step options (SFT, lr 1e-3). */
function benchBatch() {
  const [B, T] = [16, 128];
  const n = B * T;
  const batch = {
    batch: B,
    seqLen: T,
    tokens: Int32Array.from({ length: n }, (_, i) => (i * 7919) % 256),
    attentionMask: new Float32Array(n).fill(1),
    lossMask: new Float32Array(n).fill(1),
  };
  return { B, T, n, batch, opts: { loss: { kind: 'sft', aggregation: 'token-mean' }, lr: 1e-3 } as const };
}

async function trainStep(threads: number, peak: { wall: number; perCore: number }): Promise<void> {
  const { B, T, n, batch, opts } = benchBatch();
  const flops = trainFlopsPerToken(BENCH_MODEL, T) * n;
  const run = async (th: number, spin: boolean) => {
    const policy = new Policy({ config: BENCH_MODEL, seed: 1, threads: th, spin });
    const t0 = performance.now();
    await policy.trainStep(batch, opts);
    const compileSeconds = (performance.now() - t0) / 1000;
    const t = await timeIt(() => policy.trainStep(batch, opts), 6, 1, 2);
    await policy.close();
    return { ...t, compileSeconds, params: paramCount(policy.layout) };
  };
  const [t, one] = [await run(threads, true), await run(1, false)];
  emit({
    bench: 'train_step',
    params: t.params,
    batch: B,
    seqLen: T,
    threads,
    gflopPerStep: round(flops / 1e9),
    compileSeconds: round(t.compileSeconds, 2),
    stepSeconds: round(t.best, 3),
    medianStepSeconds: round(t.median, 3),
    tokensPerSecond: Math.round(n / t.best),
    gflops: round(flops / t.best / 1e9),
    ratioToMatmulPeak: round(flops / t.best / 1e9 / peak.wall, 2),
    gflopsPerCore: round(flops / one.cpu / 1e9),
    ratioToMatmulPeakPerCore: round(flops / one.cpu / 1e9 / peak.perCore, 2),
  });
}

/** The Python that has PyTorch: STARPO_TORCH_PYTHON, else the venv scripts/install-torch.sh makes. */
export function torchPython(): string | null {
  const candidates = [process.env.STARPO_TORCH_PYTHON, '.cache/torch-venv/bin/python'].filter((p): p is string => !!p);
  return candidates.find((p) => existsSync(p)) ?? null;
}

/** A PyTorch process serving timing requests (scripts/torch_train_step.py --serve), one JSON line each. */
class TorchServer {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly lines: AsyncIterator<string>;
  constructor(python: string, threads: number) {
    const script = fileURLToPath(new URL('../../scripts/torch_train_step.py', import.meta.url));
    this.child = spawn(python, [
      script,
      '--serve',
      '--compile',
      '--threads',
      String(threads),
      '--batch',
      '16',
      '--seq',
      '128',
    ]);
    this.child.stderr.resume();
    this.lines = createInterface({ input: this.child.stdout })[Symbol.asyncIterator]();
  }
  async next<T>(): Promise<T> {
    const line = await this.lines.next();
    if (line.done) throw new Error(`the PyTorch process exited (code ${this.child.exitCode})`);
    return JSON.parse(line.value) as T;
  }
  async steps(mode: string, n: number): Promise<{ wall: number[]; cpu: number[] }> {
    this.child.stdin.write(`${mode} ${n}\n`);
    return this.next();
  }
  close(): void {
    this.child.stdin.end();
  }
}

interface Samples {
  wall: number[];
  cpu: number[];
}
const stats = (s: Samples) => {
  const wall = [...s.wall].sort((a, b) => a - b);
  return { best: round(wall[0], 4), median: round(wall[wall.length >> 1], 4), cpu: round(Math.min(...s.cpu), 4) };
};

/**
 * Our step and PyTorch's (eager, and torch.compile where it builds) for the same model, interleaved in
 * rounds so that both see the same machine: a shared machine drifts by more than the difference
 * between a sequential run of each. With `threads` spinning threads (wall-clock) and with one thread
 * (CPU seconds: the work itself, least disturbed by other processes).
 */
async function trainStepVsPytorch(threads: number, rounds = 8, perRound = 3): Promise<void> {
  const python = torchPython();
  if (!python) {
    emit({
      bench: 'train_step_vs_pytorch',
      skipped: 'PyTorch is not installed here: run scripts/install-torch.sh (or set STARPO_TORCH_PYTHON)',
    });
    return;
  }
  const { batch, opts } = benchBatch();
  for (const th of [...new Set([threads, 1])]) {
    const torch = new TorchServer(python, th);
    try {
      const info = await torch.next<{
        torch: string;
        params: number;
        modes: string[];
        errors: Record<string, string>;
      }>();
      const policy = new Policy({ config: BENCH_MODEL, seed: 1, threads: th, spin: th > 1 });
      for (let i = 0; i < 2; i++) await policy.trainStep(batch, opts);
      const samples: Record<string, Samples> = Object.fromEntries(
        ['starpo', ...info.modes].map((k) => [k, { wall: [], cpu: [] }]),
      );
      // Idle spinning threads of one side (onnxruntime's, OpenMP's) would slow the other: pause between sides.
      const settle = () => new Promise((resolve) => setTimeout(resolve, 300));
      for (let r = 0; r < rounds; r++) {
        await settle();
        for (let i = 0; i < perRound; i++) {
          const [t0, c0] = [performance.now(), process.cpuUsage()];
          await policy.trainStep(batch, opts);
          const c = process.cpuUsage(c0);
          samples.starpo.wall.push((performance.now() - t0) / 1000);
          samples.starpo.cpu.push((c.user + c.system) / 1e6);
        }
        for (const mode of info.modes) {
          await settle();
          const t = await torch.steps(mode, perRound);
          samples[mode].wall.push(...t.wall);
          samples[mode].cpu.push(...t.cpu);
        }
      }
      await policy.close();
      const s = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, stats(v)]));
      // Interference only ever slows a step, so each side's least disturbed step is compared (medians shown
      // too): CPU seconds on one thread, wall-clock seconds on several.
      const measure = (k: string) => (th === 1 ? s[k].cpu : s[k].best);
      const speedup = (mode: string) => (s[mode] ? round(measure(mode) / measure('starpo'), 2) : null);
      emit({
        bench: 'train_step_vs_pytorch',
        torch: info.torch,
        threads: th,
        params: { starpo: paramCount(policy.layout), pytorch: info.params },
        rounds,
        stepsPerRound: perRound,
        compared: th === 1 ? 'cpu seconds (best)' : 'wall seconds (best)',
        starpo: s.starpo,
        pytorchEager: s.eager,
        pytorchCompiled: s.compiled ?? null,
        ...(info.errors.compiled ? { compileError: info.errors.compiled } : {}),
        speedupVsEager: speedup('eager'),
        speedupVsCompiled: speedup('compiled'),
      });
    } finally {
      torch.close();
    }
  }
}

/** The embedding gradient alone, both ways, at the benchmark's shape and at a 32k vocabulary. */
async function embeddingGrad(threads: number): Promise<void> {
  for (const V of [256, 32768]) {
    const seconds: Record<string, number> = {};
    for (const mode of ['onehot', 'scatter'] as const) {
      const g = new Graph('float32', programOptions({ onehotMaxElements: mode === 'onehot' ? Infinity : 0 }));
      const table = g.input('table', 'float32', [V, 256]);
      const ids = g.constant(
        Array.from({ length: 2048 }, (_, i) => (i * 7919) % V),
        'int64',
        [2048],
      );
      const up = g.input('up', 'float32', [2048, 256]);
      g.output('d', grad(o.reduceSum(o.mul(o.gather(table, ids), up), [0, 1], false), [table])[0]);
      const s: Session = await createSession(g, { threads });
      const feeds = {
        table: floatTensor(new Float32Array(V * 256), [V, 256]),
        up: floatTensor(new Float32Array(2048 * 256).fill(1), [2048, 256]),
      };
      seconds[mode] = (await timeIt(() => s.run(feeds), 5, 1, 0.3)).best;
      await s.release();
    }
    const ms = (s: number) => round(s * 1e3, 2);
    emit({
      bench: 'embedding_grad',
      tokens: 2048,
      vocab: V,
      onehotMs: ms(seconds.onehot),
      scatterMs: ms(seconds.scatter),
    });
  }
}

async function generate(threads: number): Promise<void> {
  const policy = new Policy({ config: BENCH_MODEL, seed: 1, threads });
  const [B, P, N] = [128, 16, 32];
  const prompts = Array.from({ length: B }, (_, b) => Array.from({ length: P }, (_, i) => (b * 31 + i * 17) % 256));
  const req = { prompts, maxNewTokens: N, stopTokenIds: [] };
  await policy.generate({ ...req, maxNewTokens: 2 }); // compile
  const cached = await timeIt(() => policy.generate(req), 2, 0, 0);
  await generateWithoutCache(policy, prompts, 2); // compile the first buckets
  const full = await timeIt(() => generateWithoutCache(policy, prompts, N), 1, 0, 0);
  emit({
    bench: 'generate',
    sequences: B,
    promptTokens: P,
    newTokens: N,
    threads,
    withCacheTokensPerSecond: Math.round((B * N) / cached.best),
    withoutCacheTokensPerSecond: Math.round((B * N) / full.best),
    speedup: round(full.best / cached.best),
  });
  await policy.close();
}

const PARTS = ['train_step', 'pytorch', 'embedding_grad', 'generate'] as const;

/** All parts, or those named in STARPO_BENCH_CASES (comma-separated: train_step, pytorch, embedding_grad, generate). */
export async function benchEngine(): Promise<void> {
  const threads = defaultThreads();
  const parts = new Set(pickNames('STARPO_BENCH_CASES', 'engine parts', process.env.STARPO_BENCH_CASES, PARTS));
  if (parts.has('train_step')) await trainStep(threads, await matmulPeak(threads));
  if (parts.has('pytorch')) await trainStepVsPytorch(threads);
  if (parts.has('embedding_grad')) await embeddingGrad(threads);
  if (parts.has('generate')) await generate(threads);
}
