/**
 * `starpo bench scale`: starpo beside PyTorch eager + transformers at the real 0.5B shapes, as JSON lines.
 *
 * Models (random init from the published config.json, float32): Qwen2.5-0.5B (494M parameters) and
 * Qwen3-0.6B (596M); `--quick` uses ~43M-parameter shapes of the same two architectures (same vocabulary).
 * Cases (STARPO_BENCH_CASES or --cases, comma-separated): train_step on 4x512 and 1x1024 tokens, full
 * fine-tune and LoRA r 16 (alpha 32, q/k/v/o/gate/up/down), SFT token-mean cross-entropy, clip 1.0,
 * AdamW lr 1e-5 — `4x512-full`, `4x512-lora`, `1x1024-full`, `1x1024-lora` — and `generate`: greedy,
 * 16 prompts of 512 tokens + 64 new tokens, KV cache on both sides. --models picks models.
 *
 * Every measurement runs in its own child process per side (RSS is per process), the two sides one
 * after the other, never at once; before each child the bench waits (polling every 30 s, up to 20 min)
 * until the machine has STARPO_BENCH_MIN_AVAILABLE_GB available (20 at full size, 8 with --quick). The
 * machine is shared, so each child gets oom_score_adj 1000 and is ended when less than
 * STARPO_BENCH_KILL_BELOW_GB (0.75) stays available. When PyTorch's whole-batch step fails (it does not
 * fit), the same step runs again with gradient accumulation over rows (`pytorchVariant` says so). Each line
 * has both figures, the ratio starpo / PyTorch, what "better" means and the target, and the machine's load
 * (os.loadavg before the child, the mean 1-minute load sampled while it ran) and available memory
 * (before, and the least while it ran) per side. Lines: `init` (seconds: starpo's packed-parameter
 * init vs the model's construction), `compile` (starpo's graph build + session creation; PyTorch has
 * none: 0), `train_step` (best of the steps after the first; full fine-tuning's also as GFLOP/s per side and
 * their share of onnxruntime's MatMul peak, measured first: the `matmul` and `matmul_peak` lines), `peak_rss`
 * (bytes: VmHWM of the child), `lora_rss_vs_full` (LoRA's peak RSS over full fine-tuning's at that shape),
 * `generate` (new tokens per second of one timed call after compile / warm-up).
 *
 * With --model (a model directory, a .gguf or a packaged name; alone, SmolLM2-135M-Instruct) both sides load that
 * model's weights instead (starpo as a run does, transformers with from_pretrained; init is the load), and the
 * generate case also runs llama.cpp on the same weights exported as F32 and Q8_0 GGUF (where node-llama-cpp is
 * installed, llama-cpp-peer.ts), on the same prompt token ids: its lines compare starpo with each.
 *
 *   npx starpo bench scale [--quick] [--cases 4x512-full,generate] [--models qwen2.5-0.5b]
 *   npx starpo bench scale --model [smollm2-135m-instruct | <dir> | <file.gguf>]
 */
import { spawn } from 'node:child_process';
import { readFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError } from '../errors.ts';
import { pickNames } from './name-list.ts';
import { QWEN25_05B_CONFIG, QWEN3_06B_CONFIG } from '../policy/io/published-configs.ts';
import { matmulPeak, torchPython } from './engine.ts';
import { parseModelConfig } from '../policy/io/config.ts';
import { trainFlopsPerToken } from '../policy/model/flops.ts';
import { type ChildResult, type ChildSpec, GENERATE, LORA, generatePrompts } from './scale-child.ts';
import {
  GGUF_TYPES,
  LLAMA_CPP_INSTALL,
  type LlamaCppRun,
  ggufFor,
  llamaCppInstalled,
  runLlamaCpp,
} from './llama-cpp-peer.ts';

const emit = (line: Record<string, unknown>): void => void process.stdout.write(`${JSON.stringify(line)}\n`);
const round = (x: number, d = 3): number => Math.round(x * 10 ** d) / 10 ** d;
const GB = 2 ** 30;

/**
 * The --quick shapes: same architectures and vocabulary, width 256, 4 layers (~43M parameters,
 * 39M of them the embedding).
 */
const QUICK = { hidden_size: 256, num_hidden_layers: 4, max_window_layers: 4 };
export const MODELS: Record<string, Record<string, unknown>> = {
  'qwen2.5-0.5b': QWEN25_05B_CONFIG,
  'qwen3-0.6b': QWEN3_06B_CONFIG,
  'qwen2.5-quick': {
    ...QWEN25_05B_CONFIG,
    ...QUICK,
    num_attention_heads: 4,
    num_key_value_heads: 2,
    intermediate_size: 1024,
  },
  'qwen3-quick': {
    ...QWEN3_06B_CONFIG,
    ...QUICK,
    num_attention_heads: 4,
    num_key_value_heads: 2,
    intermediate_size: 768,
  },
};

/** What a measurement runs: a published shape (random init), or a real model's directory. */
interface ScaleModel {
  readonly name: string;
  readonly config: Record<string, unknown>;
  readonly modelDir?: string;
}

const CASES = ['4x512-full', '4x512-lora', '1x1024-full', '1x1024-lora', 'generate'] as const;

interface Machine {
  readonly loadBefore: number[];
  readonly meanLoad1: number;
  readonly availableGBBefore: number;
  readonly minAvailableGB: number;
  readonly waitedSeconds: number;
  readonly memoryWaitTimedOut?: true;
}

/** MemAvailable from /proc/meminfo (what a new process can get without swapping), else os.freemem(). */
export function availableBytes(): number {
  try {
    const m = /MemAvailable:\s+(\d+) kB/.exec(readFileSync('/proc/meminfo', 'utf8'));
    if (m) return Number(m[1]) * 1024;
  } catch {
    // not Linux
  }
  return os.freemem();
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits (polling every 30 s, up to 20 min) until `needGB` is available; returns how long it waited. */
async function waitForMemory(needGB: number): Promise<{ waited: number; timedOut: boolean }> {
  const start = performance.now();
  while (availableBytes() / GB < needGB) {
    if (performance.now() - start > 20 * 60e3) return { waited: (performance.now() - start) / 1000, timedOut: true };
    process.stderr.write(`bench scale: ${round(availableBytes() / GB, 1)} GB available, waiting for ${needGB} GB\n`);
    await sleep(30e3);
  }
  return { waited: (performance.now() - start) / 1000, timedOut: false };
}

/** Runs one child (starpo or PyTorch) and returns its JSON result with the machine's state around it. */
async function runChild(
  side: 'starpo' | 'pytorch',
  spec: ChildSpec,
  needGB: number,
): Promise<{ result: ChildResult; machine: Machine }> {
  const { waited, timedOut } = await waitForMemory(needGB);
  const loadBefore = os.loadavg().map((x) => round(x, 2));
  const availableGBBefore = round(availableBytes() / GB, 2);
  let [loadSum, samples, minAvailable] = [0, 0, availableBytes()];
  const sampler = setInterval(() => {
    loadSum += os.loadavg()[0];
    samples++;
    minAvailable = Math.min(minAvailable, availableBytes());
  }, 5000);
  try {
    const text = await spawnJson(side, spec);
    const result = JSON.parse(text) as ChildResult;
    const machine: Machine = {
      loadBefore,
      meanLoad1: round(samples ? loadSum / samples : os.loadavg()[0], 2),
      availableGBBefore,
      minAvailableGB: round(minAvailable / GB, 2),
      waitedSeconds: round(waited, 0),
      ...(timedOut ? { memoryWaitTimedOut: true as const } : {}),
    };
    return { result, machine };
  } finally {
    clearInterval(sampler);
  }
}

let workDir: string | null = null;

/** A child is ended when the machine's available memory falls below this (GB). */
const KILL_BELOW_GB = Number(process.env.STARPO_BENCH_KILL_BELOW_GB ?? 0.75);

type Side = 'starpo' | 'pytorch';

/** The command that runs one side's child: starpo's own (scale-child.ts) or PyTorch's (scripts/torch_scale.py). */
function childCommand(side: Side, spec: ChildSpec, root: string): [string, string[]] {
  if (side === 'starpo') {
    const child = fileURLToPath(new URL('./scale-child.ts', import.meta.url));
    return [process.execPath, ['--import', 'tsx', child, JSON.stringify(spec)]];
  }
  const python = torchPython();
  if (!python)
    throw new ConfigError(
      'pytorch',
      'PyTorch is not installed here: run scripts/install-torch.sh (or set STARPO_TORCH_PYTHON)',
    );
  workDir ??= mkdtempSync(path.join(os.tmpdir(), 'starpo-scale-'));
  const cfgPath = path.join(workDir, 'config.json');
  writeFileSync(cfgPath, JSON.stringify(spec.config));
  const args = [
    path.join(root, 'scripts/torch_scale.py'),
    spec.mode,
    '--config',
    cfgPath,
    '--threads',
    String(spec.threads),
    ...(spec.modelDir ? ['--model-dir', spec.modelDir] : []),
  ];
  if (spec.mode === 'train') {
    const lora = spec.lora ? String(LORA.rank) : '0';
    args.push('--batch', String(spec.batch), '--seq', String(spec.seq), '--steps', String(spec.steps ?? 3));
    args.push('--lora', lora, ...(spec.micro ? ['--micro', String(spec.micro)] : []));
  } else {
    const { prompts, promptLen, newTokens } = GENERATE;
    args.push('--prompts', String(prompts), '--prompt-len', String(promptLen), '--new', String(newTokens));
  }
  return [python, args];
}

/** Runs one side's child and resolves with the last JSON line it printed. */
function spawnJson(side: Side, spec: ChildSpec): Promise<string> {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const [cmd, args] = childCommand(side, spec, root);
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      cwd: root,
      env: { ...process.env, HF_HUB_OFFLINE: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // The machine is shared: if memory runs out, the kernel should take this child, not someone else's
    // process, and below KILL_BELOW_GB available the bench ends the child itself (reported as an error).
    try {
      writeFileSync(`/proc/${child.pid}/oom_score_adj`, '1000');
    } catch {
      // not Linux, or not allowed: the watchdog below still applies
    }
    let killed: string | null = null;
    const watchdog = setInterval(() => {
      const gb = availableBytes() / GB;
      if (gb < KILL_BELOW_GB && !killed) {
        killed = `killed by the bench: ${round(gb, 2)} GB available (below ${KILL_BELOW_GB})`;
        child.kill('SIGKILL');
      }
    }, 500);
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearInterval(watchdog);
      const line = out
        .trim()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .at(-1);
      if (code === 0 && line) return resolve(line);
      const why = `${code ?? signal}${killed ? ` (${killed})` : ''}`;
      reject(
        new Error(`${side} child (${spec.mode}) exited with ${why}: ${err.trim().split('\n').slice(-8).join('\n')}`),
      );
    });
  });
}

interface Options {
  readonly quick?: boolean;
  readonly cases?: string;
  readonly models?: string;
  /** A real model (directory, .gguf or packaged name); `true`: the packaged SmolLM2-135M-Instruct. */
  readonly model?: string | true;
  readonly steps?: string;
  readonly sides?: string;
}

/** The best (least disturbed) of the steps after the first (which compiles). */
const bestStep = (r: ChildResult): number =>
  Math.min(...(r.stepSeconds!.length > 1 ? r.stepSeconds!.slice(1) : r.stepSeconds!));

export type Measured = { result: ChildResult; machine: Machine };
export type SideRuns = Partial<Record<Side, Measured>>;

/** What a case runs: generation, or train steps of `batch` × `seq` (full or LoRA: `4x512-lora`). */
function childSpec(c: (typeof CASES)[number], model: ScaleModel, threads: number, steps: number): ChildSpec {
  const { config, modelDir } = model;
  const from = { config, threads, ...(modelDir ? { modelDir } : {}) };
  if (c === 'generate') return { mode: 'generate', ...from };
  const [batch, seq] = c.split('-')[0].split('x').map(Number);
  return { mode: 'train', ...from, batch, seq, steps, lora: c.endsWith('lora') };
}

/**
 * Runs each side of one case; a failure is emitted as an error line. When PyTorch's whole batch does not fit
 * in one forward/backward, it runs again with gradient accumulation over single rows (named as a variant).
 */
async function runSides(
  at: { model: string; case: string },
  spec: ChildSpec,
  sides: readonly Side[],
  needGB: number,
): Promise<{ runs: SideRuns; pytorchVariant: string | null }> {
  const runs: SideRuns = {};
  let pytorchVariant: string | null = null;
  const failed = (side: Side, err: unknown, extra: Record<string, unknown> = {}) => {
    const error = String((err as Error).message ?? err).slice(0, 2000);
    emit({ bench: 'scale', ...at, side, ...extra, error });
    return error;
  };
  for (const side of sides) {
    try {
      runs[side] = await runChild(side, spec, needGB);
    } catch (err) {
      const message = failed(side, err);
      if (side !== 'pytorch' || spec.mode !== 'train' || spec.batch === 1) continue;
      try {
        runs.pytorch = await runChild('pytorch', { ...spec, micro: 1 }, needGB);
        pytorchVariant =
          'gradient accumulation, 1 row per forward/backward (the whole batch failed: ' +
          `${message.split('\n')[0].slice(0, 200)})`;
      } catch (err2) {
        failed(side, err2, { micro: 1 });
      }
    }
  }
  return { runs, pytorchVariant };
}

/** One measurement line: both sides, their ratio (starpo / pytorch) and whether it meets `target` (`<=1`, `>=1`). */
function lineEmitter(base: Record<string, unknown>, runs: SideRuns) {
  const machine = { starpo: runs.starpo?.machine ?? null, pytorch: runs.pytorch?.machine ?? null };
  return (
    measurement: string,
    unit: string,
    better: 'lower' | 'higher',
    [sv, pv]: [number | null, number | null],
    target: string | null,
    extra: Record<string, unknown> = {},
  ) => {
    const ratio = sv !== null && pv !== null && pv > 0 ? round(sv / pv, 3) : null;
    const bound = target === null ? 0 : Number(target.slice(2));
    const met = target === null || ratio === null ? null : target.startsWith('<=') ? ratio <= bound : ratio >= bound;
    const starpo = sv === null ? null : round(sv, 3);
    const pytorch = pv === null ? null : round(pv, 3);
    emit({ ...base, measurement, unit, better, starpo, pytorch, ratio, target, met, ...extra, machine });
  };
}

/** A measure of both sides, null for a side that did not run. */
const both = <T>(runs: SideRuns, f: (r: ChildResult) => T): [T | null, T | null] => [
  runs.starpo ? f(runs.starpo.result) : null,
  runs.pytorch ? f(runs.pytorch.result) : null,
];
const perSide = <T>(runs: SideRuns, f: (r: ChildResult) => T) => {
  const [starpo, pytorch] = both(runs, f);
  return { starpo, pytorch };
};

/**
 * A full fine-tuning step's GFLOP/s on each side and its share of onnxruntime's measured MatMul peak, so a ratio to
 * PyTorch is read against what the cores can do at all. LoRA skips the frozen weights' gradients: not counted.
 */
export function trainThroughput(spec: ChildSpec, runs: SideRuns, peakGflops: number | null) {
  if (spec.lora || !spec.batch || !spec.seq) return {};
  const flops = trainFlopsPerToken(parseModelConfig(spec.config), spec.seq) * spec.batch * spec.seq;
  const gflops = perSide(runs, (r) => round(flops / bestStep(r) / 1e9, 1));
  const share = (g: number | null) => (g === null || !peakGflops ? null : round(g / peakGflops, 3));
  return {
    gflopPerStep: round(flops / 1e9, 1),
    gflops,
    matmulPeakGflops: peakGflops === null ? null : round(peakGflops, 1),
    ofMatmulPeak: { starpo: share(gflops.starpo), pytorch: share(gflops.pytorch) },
  };
}

/** A train case's lines: the best step, peak RSS, and LoRA's RSS against the same shape's full fine-tuning. */
function emitTrain(
  line: ReturnType<typeof lineEmitter>,
  base: Record<string, unknown>,
  runs: SideRuns,
  c: string,
  fullRss: Map<string, Partial<Record<Side, number>>>,
  throughput: Record<string, unknown>,
): void {
  line('train_step', 's', 'lower', both(runs, bestStep), '<=1', {
    ...throughput,
    steps: perSide(runs, (r) => r.stepSeconds!.map((x) => round(x))),
    cpuSeconds: perSide(runs, (r) => r.stepCpuSeconds!.map((x) => round(x))),
    loss: perSide(runs, (r) => r.losses?.[0]),
    trainedParams: perSide(runs, (r) => r.trainedParams),
  });
  emitPeakRss(line, runs);
  const shape = c.split('-')[0];
  if (!c.endsWith('lora')) {
    fullRss.set(shape, { starpo: runs.starpo?.result.peakRssBytes, pytorch: runs.pytorch?.result.peakRssBytes });
    return;
  }
  const full = fullRss.get(shape);
  if (!full) return;
  const frac = (side: Side) =>
    runs[side] && full[side] ? round(runs[side]!.result.peakRssBytes / full[side]!, 3) : null;
  const starpo = frac('starpo');
  emit({
    ...base,
    measurement: 'lora_rss_vs_full',
    unit: 'fraction',
    better: 'lower',
    starpo,
    pytorch: frac('pytorch'),
    target: 'starpo <= 0.6',
    met: starpo === null ? null : starpo <= 0.6,
  });
}

/** Both sides' peak resident memory. */
function emitPeakRss(line: ReturnType<typeof lineEmitter>, runs: SideRuns): void {
  line(
    'peak_rss',
    'bytes',
    'lower',
    both(runs, (r) => r.peakRssBytes),
    '<=1',
  );
}

/** Whether both sides' greedy rows began with the same tokens (only meaningful when they share weights). */
function sameFirstTokens(runs: SideRuns): boolean | null {
  const [a, b] = both(runs, (r) => JSON.stringify(r.firstTokens ?? null));
  return a === null || b === null ? null : a === b;
}

/** The generate case's lines: tokens per second and peak RSS. */
function emitGenerate(line: ReturnType<typeof lineEmitter>, runs: SideRuns, sharedWeights: boolean): void {
  line(
    'generate',
    'tokens/s',
    'higher',
    both(runs, (r) => r.tokensPerSecond!),
    '>=1',
    {
      seconds: perSide(runs, (r) => round(r.generateSeconds!)),
      ...GENERATE,
      ...(sharedWeights ? { sameFirstTokens: sameFirstTokens(runs) } : {}),
    },
  );
  emitPeakRss(line, runs);
}

/**
 * The generate case on llama.cpp, F32 and Q8_0 (real weights only): tokens/s over the whole call as the other sides
 * count it (prompts · new tokens / prefill + decode), starpo's over each, peak RSS, the load around it.
 */
async function emitLlamaCpp(
  base: Record<string, unknown>,
  modelDir: string,
  spec: ChildSpec,
  starpo: ChildResult | null,
): Promise<void> {
  if (!llamaCppInstalled()) {
    emit({ ...base, side: 'llama.cpp', error: `node-llama-cpp is not installed: ${LLAMA_CPP_INSTALL}` });
    return;
  }
  const prompts = generatePrompts(Number(spec.config.vocab_size));
  for (const type of GGUF_TYPES) {
    const loadBefore = os.loadavg().map((x) => round(x, 2));
    let run: LlamaCppRun;
    try {
      const modelPath = await ggufFor(modelDir, type);
      run = await runLlamaCpp({ modelPath, prompts, newTokens: GENERATE.newTokens, threads: spec.threads });
    } catch (err) {
      emit({ ...base, side: `llama.cpp-${type}`, error: String((err as Error).message ?? err).slice(0, 2000) });
      continue;
    }
    const seconds = run.prefillSeconds + run.decodeSeconds;
    const tokensPerSecond = (GENERATE.prompts * GENERATE.newTokens) / seconds;
    const ours = starpo?.tokensPerSecond ?? null;
    emit({
      ...base,
      measurement: `generate_vs_llama_cpp_${type.toLowerCase()}`,
      unit: 'tokens/s',
      better: 'higher',
      starpo: ours === null ? null : round(ours, 3),
      peer: round(tokensPerSecond, 3),
      ratio: ours === null ? null : round(ours / tokensPerSecond, 3),
      target: null,
      peerSeconds: { prefill: round(run.prefillSeconds), decode: round(run.decodeSeconds) },
      peerPeakRssBytes: run.peakRssBytes,
      ...GENERATE,
      machine: { loadBefore, loadAfter: os.loadavg().map((x) => round(x, 2)) },
    });
  }
}

/** The default of a bare --model: the packaged chat model every SmolLM2 benchmark uses. */
export const DEFAULT_REAL_MODEL = 'smollm2-135m-instruct';

/** --model's spec as a model directory (resolved, imported or unpacked as a run would) with its config.json. */
async function realModel(spec: string): Promise<ScaleModel> {
  const { resolveModel } = await import('../models/resolve.ts');
  const modelDir = await resolveModel(spec, { say: (line) => process.stderr.write(`bench scale: ${line}\n`) });
  const config = JSON.parse(readFileSync(path.join(modelDir, 'config.json'), 'utf8')) as Record<string, unknown>;
  return { name: path.basename(spec).replace(/\.gguf$/i, ''), config, modelDir };
}

/** The run's choices from the options and the environment, checked before anything runs. */
async function scaleOptions(opts: Options) {
  const quick = opts.quick ?? process.env.STARPO_BENCH_QUICK === '1';
  const picked = pickNames('cases', 'scale cases', opts.cases ?? process.env.STARPO_BENCH_CASES, CASES);
  if (opts.model && (opts.models || opts.quick))
    throw new ConfigError('model', '--model measures one real model: leave out --models and --quick');
  const names =
    opts.models?.split(',').map((m) => m.trim()) ??
    (quick ? ['qwen2.5-quick', 'qwen3-quick'] : ['qwen2.5-0.5b', 'qwen3-0.6b']);
  const badModel = names.find((m) => !MODELS[m]);
  if (!opts.model && badModel)
    throw new ConfigError('models', `unknown model ${badModel}; known: ${Object.keys(MODELS).join(', ')}`);
  const models: ScaleModel[] = opts.model
    ? [await realModel(opts.model === true ? DEFAULT_REAL_MODEL : opts.model)]
    : names.map((name) => ({ name, config: MODELS[name] }));
  return {
    picked,
    models,
    sides: (opts.sides?.split(',') ?? ['starpo', 'pytorch']) as Side[],
    steps: Number(opts.steps ?? 3),
    needGB: Number(process.env.STARPO_BENCH_MIN_AVAILABLE_GB ?? (quick || opts.model ? 8 : 20)),
    threads: Math.max(1, os.availableParallelism?.() ?? os.cpus().length),
  };
}

export async function benchScale(opts: Options = {}): Promise<void> {
  const { picked, models, sides, steps, needGB, threads } = await scaleOptions(opts);
  // Measured once, before the cases, with nothing else of the bench running.
  const peak = picked.some((c) => c.endsWith('-full')) ? (await matmulPeak(threads)).wall : null;
  for (const m of models) {
    const model = m.name;
    const fullRss = new Map<string, Partial<Record<Side, number>>>();
    let initDone = false;
    for (const c of picked) {
      const spec = childSpec(c, m, threads, steps);
      const { runs, pytorchVariant } = await runSides({ model, case: c }, spec, sides, needGB);
      const params = runs.starpo?.result.params ?? runs.pytorch?.result.params;
      const weights = m.modelDir ? { weights: m.modelDir } : {};
      const base = {
        bench: 'scale',
        model,
        ...weights,
        params,
        case: c,
        ...(pytorchVariant ? { pytorchVariant } : {}),
      };
      const line = lineEmitter(base, runs);
      if (!initDone && (runs.starpo || runs.pytorch)) {
        const s = runs.starpo?.result.initSeconds;
        line(
          'init',
          's',
          'lower',
          both(runs, (r) => r.initSeconds),
          null,
          {
            targetSeconds: 5,
            metSeconds: s === undefined ? null : s <= 5,
          },
        );
        initDone = true;
      }
      if (runs.starpo)
        line('compile', 's', 'lower', [runs.starpo.result.compileSeconds ?? null, runs.pytorch ? 0 : null], null, {
          programs: (runs.starpo.result.compiles as unknown[] | undefined) ?? [],
        });
      if (spec.mode === 'train') emitTrain(line, base, runs, c, fullRss, trainThroughput(spec, runs, peak));
      else {
        emitGenerate(line, runs, !!m.modelDir);
        if (m.modelDir) await emitLlamaCpp(base, m.modelDir, spec, runs.starpo?.result ?? null);
      }
    }
  }
}
