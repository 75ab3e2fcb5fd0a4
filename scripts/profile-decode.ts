/**
 * Where a decode step goes on a real model: onnxruntime's per-node profile of starpo's generation, per row count,
 * as JSON lines. For each row count, one line per operator type of the decode program (kernel ms per step, share,
 * nodes), then a total line: wall ms per step, the decode program's kernel ms and run ms per step (the gap between
 * them is onnxruntime's own work around the kernels: input binding, allocation, output copies), the time outside the
 * program (JavaScript: sampling, the cache slots, tensor wrapping), and the prefill.
 *
 *   node --import tsx scripts/profile-decode.ts [model-dir] [rows,…] [new tokens] [threads]
 *   node --import tsx scripts/profile-decode.ts .cache/models/smollm2-135m-instruct/hf 1,8,32,128 32 2
 *
 * First the machine's bounds, measured in the same run: memory bandwidth (`memory_bandwidth`, a 1 GiB read by
 * onnxruntime and a JavaScript copy) and the fp32 MatMul peak (`matmul_peak`, bench engine's shapes). The total lines
 * set each step against them: `boundMs`, the weights every step reads (each matrix once, the LM head included) at the
 * read bandwidth, and `ratioToBound`; `gflops`, the step's FLOPs (every row's token, attention over the cache's slots)
 * per second, and `ratioToMatmulPeak`.
 *
 * Greedy, a 121-token prompt (the one scripts/decode-contention.ts uses), no stop token, so every row decodes every
 * step. Each row count runs twice in a fresh engine and the second run is the one summed (the first compiles the
 * programs and warms the arena).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const [dirArg = '.cache/models/smollm2-135m-instruct/hf', rowsArg = '1,8,32,128', newArg = '32', threadArg = '2'] =
  process.argv.slice(2);
const rowCounts = rowsArg.split(',').map(Number);
const newTokens = Number(newArg);
const threads = Number(threadArg);

const { openModelDirectory } = await import('../src/policy/io/model-dir.ts');
const { readModelWeights } = await import('../src/policy/io/sharded.ts');
const { Policy } = await import('../src/policy/engine/policy.ts');
const { loadTokenizer } = await import('../src/policy/tokenizer/load.ts');
const { importState } = await import('../src/policy/engine/state.ts');
const { matmulPeak, memoryBandwidth } = await import('../src/bench/engine.ts');
const { forwardFlopsPerToken } = await import('../src/policy/model/flops.ts');

const bandwidth = await memoryBandwidth(threads);
const peak = await matmulPeak(threads);

const model = await openModelDirectory(dirArg);
const tokenizer = loadTokenizer(model.assets);
const weights = await readModelWeights(model.dir);
const prompt = tokenizer.encode('The quick brown fox jumps over the lazy dog. '.repeat(12));

interface ProfileEvent {
  cat: string;
  name: string;
  ts: number;
  dur: number;
  args?: { op_name?: string };
}

/** One session's profile: its program runs (ts, dur) and kernel events, both from the second generate on. */
function readProfile(file: string, from: number) {
  const events = JSON.parse(readFileSync(file, 'utf8')) as ProfileEvent[];
  const runs = events.filter((e) => e.cat === 'Session' && e.name === 'model_run' && e.ts >= from);
  const kernels = events.filter((e) => e.cat === 'Node' && e.name.endsWith('_kernel_time') && e.ts >= from);
  return { runs, kernels };
}

const round = (x: number) => Math.round(x * 100) / 100;

for (const rows of rowCounts) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'starpo-decode-profile-'));
  process.env.STARPO_ORT_PROFILE = path.join(dir, 'gen'); // read when each session is created
  const policy = new Policy({ config: model.config, seed: 0, threads, tokenizer });
  importState(policy, { weights, optimizer: null, step: 0 });
  const req = { prompts: Array.from({ length: rows }, () => prompt), maxNewTokens: newTokens, stopTokenIds: [] };
  const origin = performance.now();
  await policy.generate(req);
  // Profile timestamps are µs since each session's start; the measured run is told apart by the wall clock.
  const t0 = performance.now();
  await policy.generate(req);
  const wallMs = performance.now() - t0;
  await policy.releasePrograms(); // writes the profiles
  await policy.close();

  let decode: ReturnType<typeof readProfile> | null = null;
  let prefillRunMs = 0;
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.json'))) {
    const all = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as ProfileEvent[];
    const runs = all.filter((e) => e.cat === 'Session' && e.name === 'model_run').sort((a, b) => a.ts - b.ts);
    if (runs.length === 0) continue;
    // Every session ran in both generates: its later half of runs is the measured one.
    const from = runs[Math.floor(runs.length / 2)]!.ts;
    const p = readProfile(path.join(dir, file), from);
    // The decode program runs once per new token after the first; the prefill (extend) a few times at most.
    if (p.runs.length >= newTokens - 1 && (decode === null || p.runs.length > decode.runs.length)) {
      if (decode) prefillRunMs += decode.runs.reduce((s, e) => s + e.dur / 1000, 0);
      decode = p;
    } else prefillRunMs += p.runs.reduce((s, e) => s + e.dur / 1000, 0);
  }
  rmSync(dir, { recursive: true, force: true });
  if (!decode) throw new Error(`no decode program profile for ${rows} rows`);
  const steps = decode.runs.length;
  const byOp = new Map<string, { ms: number; nodes: number }>();
  let kernelMs = 0;
  for (const e of decode.kernels) {
    const op = e.args?.op_name ?? '?';
    const entry = byOp.get(op) ?? { ms: 0, nodes: 0 };
    entry.ms += e.dur / 1000;
    entry.nodes += 1;
    byOp.set(op, entry);
    kernelMs += e.dur / 1000;
  }
  const runMs = decode.runs.reduce((s, e) => s + e.dur / 1000, 0);
  for (const [op, { ms, nodes }] of [...byOp].sort((a, b) => b[1].ms - a[1].ms)) {
    const perStep = { msPerStep: round(ms / steps), share: round(ms / kernelMs), nodes: nodes / steps };
    console.log(JSON.stringify({ bench: 'decode_profile', rows, op, ...perStep }));
  }
  const decodeWallMs = wallMs - prefillRunMs;
  const msPerStep = decodeWallMs / steps;
  // Weights a step reads: one multiply-add per weight of every matrix product at T = 0 (no attention term).
  const boundMs = ((4 * forwardFlopsPerToken(model.config, 0)) / 2 / (bandwidth.read * 1e9)) * 1000;
  const slots = Math.ceil((prompt.length + newTokens) / 32) * 32; // the cache's length (a multiple of 32)
  const gflops = (rows * forwardFlopsPerToken(model.config, slots)) / (msPerStep / 1000) / 1e9;
  console.log(
    JSON.stringify({
      bench: 'decode_profile',
      total: true,
      rows,
      newTokens,
      threads,
      promptTokens: prompt.length,
      tokensPerSecond: round((rows * newTokens) / (wallMs / 1000)),
      wallMs: round(wallMs),
      prefillMs: round(prefillRunMs),
      decodeSteps: steps,
      msPerStep: round(msPerStep),
      boundMs: round(boundMs),
      ratioToBound: round(msPerStep / boundMs),
      gflops: round(gflops),
      ratioToMatmulPeak: round(gflops / peak.wall),
      kernelMsPerStep: round(kernelMs / steps),
      runMsPerStep: round(runMs / steps),
      outsideProgramMsPerStep: round((decodeWallMs - runMs) / steps),
      load: os.loadavg().map(round),
      startedAfterMs: round(t0 - origin),
    }),
  );
}
