/**
 * Where a train_step's time goes at the real shapes: onnxruntime's per-node profile of starpo's step,
 * summed by operator type, as JSON lines (one per type, largest first, then a total).
 *
 *   node --import tsx scripts/profile-step.ts [model] [batch]x[seq] [full|lora] [threads]
 *   node --import tsx scripts/profile-step.ts qwen2.5-0.5b 1x1024 full 2
 *
 * Models are `bench scale`'s (qwen2.5-0.5b, qwen3-0.6b, and their -quick shapes) or a model directory's shape
 * (e.g. .cache/models/smollm2-135m-instruct/hf; its weights are not read: random init, same arithmetic). The step
 * is bench scale's (SFT token-mean cross-entropy, AdamW): two steps run and the second is the one summed, so the first
 * run's allocations and kernel selection are left out. Kernel time is onnxruntime's own (`*_kernel_time`
 * events), summed over every session of the step (gradient programs, norm, optimizer chunks); the gap to
 * the wall-clock is time outside kernels (input copies, the host side, the session's scheduling).
 */
import { existsSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { kernelTimeByOp, laterHalfOfEachSession } from './ort-profile.ts';

const [model = 'qwen2.5-quick', shape = '1x256', kind = 'full', threadArg = '2'] = process.argv.slice(2);
const dir = mkdtempSync(path.join(os.tmpdir(), 'starpo-profile-'));
process.env.STARPO_ORT_PROFILE = path.join(dir, 'step'); // read when each session is created

const { MODELS } = await import('../src/bench/scale.ts');
const { parseModelConfig } = await import('../src/policy/io/config.ts');
const { Policy } = await import('../src/policy/engine/policy.ts');
const { LORA, syntheticSftBatch } = await import('../src/bench/scale-child.ts');
const { openModelDirectory } = await import('../src/policy/io/model-dir.ts');
const isDir = existsSync(path.join(model, 'config.json'));
if (!MODELS[model] && !isDir)
  throw new Error(`unknown model ${model} (one of ${Object.keys(MODELS).join(', ')}, or a model directory)`);
const [B, T] = shape.split('x').map(Number);
const config = isDir ? (await openModelDirectory(model)).config : parseModelConfig(MODELS[model]);
const policy = new Policy({ config, seed: 1, threads: Number(threadArg), ...(kind === 'lora' ? { lora: LORA } : {}) });
await policy.initialize();
const batch = syntheticSftBatch(B, T, config.vocabSize);
const opts = { loss: { kind: 'sft', aggregation: 'token-mean' }, lr: 1e-5 } as const;
await policy.trainStep(batch, opts);
const t0 = performance.now();
await policy.trainStep(batch, opts);
const stepMs = performance.now() - t0;
await policy.releasePrograms(); // writes the profiles

// Sessions run once per step (or once per micro-batch / optimizer chunk): the second step's runs are the later half.
const { byOp, kernelMs } = kernelTimeByOp(laterHalfOfEachSession(dir).flatMap((p) => p.kernels));
const round = (x: number) => Math.round(x * 10) / 10;
for (const [op, { ms, nodes }] of byOp) {
  console.log(JSON.stringify({ op, ms: round(ms), share: Math.round((ms / kernelMs) * 1000) / 1000, nodes }));
}
console.log(
  JSON.stringify({
    total: true,
    model,
    shape,
    kind,
    threads: Number(threadArg),
    stepMs: round(stepMs),
    kernelMs: round(kernelMs),
    outsideKernelsMs: round(stepMs - kernelMs),
    load: os.loadavg().map(round),
    profiles: dir,
  }),
);
