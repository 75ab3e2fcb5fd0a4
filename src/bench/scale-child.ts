/**
 * The starpo side of one `bench scale` measurement, run as its own process (RSS is per process):
 * `node --import tsx bench-scale-child.ts '<ChildSpec as JSON>'` prints one JSON line.
 */
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { Policy } from '../policy/engine/policy.ts';
import { importState } from '../policy/engine/state.ts';
import { parseModelConfig } from '../policy/io/config.ts';
import { openModelDirectory } from '../policy/io/model-dir.ts';
import { paramCount } from '../policy/model/layout.ts';
import type { LoraSpec } from '../policy/model/lora.ts';

export const LORA: LoraSpec = { rank: 16, alpha: 32, dropout: 0, targets: ['q', 'k', 'v', 'o', 'gate', 'up', 'down'] };
export const GENERATE = { prompts: 16, promptLen: 512, newTokens: 64 };

/** What one child process measures. */
export interface ChildSpec {
  readonly mode: 'train' | 'generate';
  readonly config: Record<string, unknown>;
  /** A Hugging Face model directory whose weights both sides load (else random init from `config`). */
  readonly modelDir?: string;
  readonly threads: number;
  readonly batch?: number;
  readonly seq?: number;
  readonly steps?: number;
  readonly lora?: boolean;
  /** PyTorch only: rows per forward/backward (gradient accumulation). */
  readonly micro?: number;
}

export interface ChildResult {
  readonly initSeconds: number;
  readonly stepCpuSeconds?: number[];
  readonly compileSeconds?: number;
  readonly stepSeconds?: number[];
  readonly losses?: number[];
  readonly generateSeconds?: number;
  readonly tokensPerSecond?: number;
  readonly peakRssBytes: number;
  readonly params: number;
  readonly trainedParams?: number;
  readonly [k: string]: unknown;
}

/** The child's peak resident set (VmHWM), in bytes. */
function peakRss(): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
  return m ? Number(m[1]) * 1024 : process.resourceUsage().maxRSS * 1024;
}

const tokensFor = (n: number, V: number, salt = 0) =>
  Int32Array.from({ length: n }, (_, i) => (i * 7919 + salt * 104729) % V);

/** The train step every scale measurement runs: B × T spread-out token ids, every position trained (SFT). */
export function syntheticSftBatch(B: number, T: number, V: number) {
  const n = B * T;
  return {
    batch: B,
    seqLen: T,
    tokens: tokensFor(n, V),
    attentionMask: new Float32Array(n).fill(1),
    lossMask: new Float32Array(n).fill(1),
  };
}

/** The generate case's prompts: spread-out token ids, the same on every side (scripts/torch_scale.py's tokens_for). */
export function generatePrompts(vocabSize: number): number[][] {
  const { prompts, promptLen } = GENERATE;
  const all = tokensFor(prompts * promptLen, vocabSize, 1);
  return Array.from({ length: prompts }, (_, b) => Array.from(all.subarray(b * promptLen, (b + 1) * promptLen)));
}

/** The starpo side of one measurement, in this (child) process. */
export async function starpoChild(spec: ChildSpec): Promise<ChildResult> {
  const t0 = performance.now();
  const dir = spec.modelDir ? await openModelDirectory(spec.modelDir) : null;
  const config = dir?.config ?? parseModelConfig(spec.config);
  const policy = new Policy({ config, seed: 1, threads: spec.threads, ...(spec.lora ? { lora: LORA } : {}) });
  await policy.initialize();
  if (dir) {
    // as a run loads it: the base under LoRA's adapters, else the trained weights themselves
    const weights = await dir.readWeights();
    if (spec.lora) policy.setBase(weights);
    else importState(policy, { weights, optimizer: null, step: 0 });
  }
  const initSeconds = (performance.now() - t0) / 1000;
  const params =
    paramCount(policy.layout.frozen ?? policy.layout) + (policy.layout.frozen ? paramCount(policy.layout) : 0);
  const compileSeconds = () => policy.programs.compiles.reduce((s, c) => s + c.buildSeconds + c.sessionSeconds, 0);
  if (spec.mode === 'train') {
    const batch = syntheticSftBatch(spec.batch!, spec.seq!, config.vocabSize);
    const opts = { loss: { kind: 'sft', aggregation: 'token-mean' }, lr: 1e-5 } as const;
    const stepSeconds: number[] = [];
    const stepCpuSeconds: number[] = [];
    const losses: number[] = [];
    for (let i = 0; i < (spec.steps ?? 3); i++) {
      const [s0, c0] = [performance.now(), process.cpuUsage()];
      const m = await policy.trainStep(batch, opts);
      const c = process.cpuUsage(c0);
      stepSeconds.push((performance.now() - s0) / 1000);
      stepCpuSeconds.push((c.user + c.system) / 1e6);
      losses.push(m.loss);
    }
    return {
      initSeconds,
      compileSeconds: compileSeconds(),
      compiles: policy.programs.compiles,
      stepSeconds,
      stepCpuSeconds,
      losses,
      peakRssBytes: peakRss(),
      params,
      trainedParams: paramCount(policy.layout),
    };
  }
  const prompts = generatePrompts(config.vocabSize);
  const req = { prompts, maxNewTokens: GENERATE.newTokens, stopTokenIds: [] };
  await policy.compileGenerate(req);
  const g0 = performance.now();
  const gens = await policy.generate(req);
  const generateSeconds = (performance.now() - g0) / 1000;
  if (gens.some((g) => g.tokens.length !== GENERATE.newTokens)) throw new Error('a row stopped early');
  return {
    initSeconds,
    compileSeconds: compileSeconds(),
    compiles: policy.programs.compiles,
    generateSeconds,
    tokensPerSecond: (GENERATE.prompts * GENERATE.newTokens) / generateSeconds,
    firstTokens: gens.map((g) => g.tokens.slice(0, 4)),
    peakRssBytes: peakRss(),
    params,
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href && process.argv[2] !== undefined) {
  const spec = JSON.parse(process.argv[2]) as ChildSpec;
  const result = await starpoChild(spec);
  process.stdout.write(`${JSON.stringify({ side: 'starpo', ...result })}\n`);
  process.exit(0);
}
