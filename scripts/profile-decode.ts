/**
 * Where a decode step goes on a real model: onnxruntime's per-node profile of starpo's generation, per row count,
 * as JSON lines. For each row count, one line per operator type of the decode program (kernel ms per step, share,
 * nodes), then a total line: wall ms per step, the decode program's kernel ms and run ms per step (the gap between
 * them is onnxruntime's own work around the kernels: input binding, allocation, output copies), the time outside the
 * program (JavaScript: sampling, the cache slots, tensor wrapping), and the prefill.
 *
 *   node --import tsx scripts/profile-decode.ts [model-dir] [rows,…] [new tokens] [threads] [temperature] [prompts]
 *   node --import tsx scripts/profile-decode.ts .cache/models/smollm2-135m-instruct/hf 1,8,32,128 32 2 0
 *
 * First the machine's bounds, measured in the same run: memory bandwidth (`memory_bandwidth`, a 1 GiB read by
 * onnxruntime and a JavaScript copy) and the fp32 MatMul peak (`matmul_peak`, bench engine's shapes). The total lines
 * set each step against them: `boundMs`, the weights every step reads (each matrix once, the LM head included) at the
 * read bandwidth, and `ratioToBound`; `gflops`, the step's FLOPs (every row's token, attention over the cache's slots)
 * per second, and `ratioToMatmulPeak`.
 *
 * Greedy by default (temperature 0; 1 samples as rollouts do, in JavaScript over the whole vocabulary), a 121-token
 * prompt (the one scripts/decode-contention.ts uses), no stop token, so every row decodes every
 * step. Every row has the same prompt by default (prompts `same`: one group, whose prompt the decode reads once a
 * step, as a GRPO group's rollouts); `distinct` puts a different first token in each row's (every row its own
 * group). Each row count runs twice in a fresh engine and the second run is the one summed (the first compiles the
 * programs and warms the arena).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { kernelTimeByOp, laterHalfOfEachSession, runMs } from './ort-profile.ts';

const [
  modelDir = '.cache/models/smollm2-135m-instruct/hf',
  rowsArg = '1,8,32,128',
  newArg = '32',
  threadArg = '2',
  tArg = '0',
  promptsArg = 'same',
] = process.argv.slice(2);
if (promptsArg !== 'same' && promptsArg !== 'distinct') {
  console.error(`profile-decode: prompts must be same or distinct, not "${promptsArg}"`);
  process.exit(2);
}
const temperature = Number(tArg);
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

// The model first: a wrong directory is refused before the bounds take their minute.
const model = await openModelDirectory(modelDir);
const bandwidth = await memoryBandwidth(threads);
const peak = await matmulPeak(threads);

const tokenizer = loadTokenizer(model.assets);
const weights = await readModelWeights(model.dir);
const prompt = tokenizer.encode('The quick brown fox jumps over the lazy dog. '.repeat(12));

const round = (x: number) => Math.round(x * 100) / 100;

for (const rows of rowCounts) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'starpo-decode-profile-'));
  process.env.STARPO_ORT_PROFILE = path.join(dir, 'gen'); // read when each session is created
  const policy = new Policy({ config: model.config, seed: 0, threads, tokenizer });
  importState(policy, { weights, optimizer: null, step: 0 });
  const prompts = Array.from({ length: rows }, (_, r) =>
    promptsArg === 'same' ? prompt : [r + 100, ...prompt.slice(1)],
  );
  const req = { prompts, maxNewTokens: newTokens, stopTokenIds: [], sampling: { temperature }, seed: 1 };
  await policy.generate(req);
  const t0 = performance.now();
  await policy.generate(req);
  const wallMs = performance.now() - t0;
  await policy.releasePrograms(); // writes the profiles
  await policy.close();

  // The decode program runs once per new token after the first; the prefill (extend) a few times at most.
  const sessions = laterHalfOfEachSession(dir).sort((a, b) => b.runs.length - a.runs.length);
  rmSync(dir, { recursive: true, force: true });
  const decode = sessions[0];
  if (!decode || decode.runs.length < newTokens - 1) throw new Error(`no decode program profile for ${rows} rows`);
  const prefillRunMs = sessions.slice(1).reduce((s, p) => s + runMs(p.runs), 0);
  const steps = decode.runs.length;
  const { byOp, kernelMs } = kernelTimeByOp(decode.kernels);
  for (const [op, { ms, nodes }] of byOp) {
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
      prompts: promptsArg,
      newTokens,
      threads,
      temperature,
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
      runMsPerStep: round(runMs(decode.runs) / steps),
      outsideProgramMsPerStep: round((decodeWallMs - runMs(decode.runs)) / steps),
      load: os.loadavg().map(round),
    }),
  );
}
