/**
 * Where an RL update's time goes, on a finished run's own batch: the iteration's trained rows (the filter's groups,
 * tokens and loss masks from its trajectory events) through the run's actor and critic, as the update stage runs
 * them (its seeded mini-batches, packing, micro-batches), twice; the second is measured. Prints JSON lines: with
 * --profile onnxruntime's kernel time by operator, then a total with the wall-clock, the update's FLOPs
 * (src/bench/iteration-flops.ts) and the share of the MatMul peak that is.
 *
 *   node --import tsx scripts/profile-update.ts <run directory> <iteration> [--profile] [--peak GFLOP/s]
 *
 * The weights are the run's initial ones (its models, LoRA adapters fresh), not the iteration's: the arithmetic is
 * the same. Advantages are ±1 by row and every old log-prob −1: what runs is the loss's arithmetic, not its values.
 * STARPO_BENCH_SET=key=value,… overrides the run's config (e.g. miniBatchSize=16).
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { printKernelTime } from './ort-profile.ts';
import { loadRunIteration } from './run-iteration.ts';

const USAGE = 'usage: profile-update.ts <run directory> <iteration> [--profile] [--peak GFLOP/s]';
const refuse = (message: string): never => {
  console.error(`profile-update: ${message}`);
  process.exit(2);
};
const args = (() => {
  try {
    return parseArgs({
      allowPositionals: true,
      options: { profile: { type: 'boolean', default: false }, peak: { type: 'string' } },
    });
  } catch (err) {
    return refuse(`${(err as Error).message} (${USAGE})`);
  }
})();
const { positionals, values } = args;
const [runDir, iterationArg] = positionals;
if (!runDir || !(Number(iterationArg) > 0)) refuse(USAGE);
if (values.peak !== undefined && !(Number(values.peak) > 0))
  refuse(`the peak must be GFLOP/s above 0, not "${values.peak}"`);
const dir = mkdtempSync(path.join(os.tmpdir(), 'starpo-profile-update-'));
if (values.profile) process.env.STARPO_ORT_PROFILE = path.join(dir, 'update'); // read when each session is created

const { matmulPeak } = await import('../src/bench/engine.ts');
const { resolveRunModel } = await import('../src/rl/run-model.ts');
const { createModels } = await import('../src/run/models.ts');
const { trainedRows } = await import('../src/rl/stages/filter.ts');
const { compactBatch, trajectoryRecordOf } = await import('../src/replay/records.ts');
const { padSequences } = await import('../src/rl/assemble.ts');
const { endAtLastTrained } = await import('../src/rl/kept-rows.ts');
const { updateStage } = await import('../src/rl/update.ts');
const { samplingSeed } = await import('../src/rl/seeds.ts');
const { TOKEN_ROLES } = await import('../src/agent/chat-format.ts');

const iteration = Number(iterationArg);
const { loc, c, trajectories, flops } = await loadRunIteration(runDir, iteration, refuse);

const records = trajectories.map((e) => trajectoryRecordOf(e, []));
const rows = trainedRows(c, compactBatch(trajectories, records)).map((r) => trajectories[r]!);
const assistant = String(TOKEN_ROLES.indexOf('assistant'));
const tokens = padSequences(
  rows.map((t) => ({ ids: t.tokenIds, mask: Array.from(t.tokenRoles, (r) => (r === assistant ? 1 : 0)) })),
);
const T = tokens.seqLen;
endAtLastTrained(tokens.attentionMask, tokens.lossMask, T); // as the kept rows are (rl/kept-rows.ts)
const advantages = new Float32Array(rows.length * T);
const oldLogprobs = new Float32Array(rows.length * T).fill(-1);
rows.forEach((_, b) => advantages.fill(b % 2 ? 1 : -1, b * T, (b + 1) * T));

const run = await resolveRunModel(c);
const { actor, critic } = createModels(c, run.modelConfig, run.tokenizer);
const trained = critic ? [actor, critic] : [actor];
for (const m of trained) await m.initialize();
const criticInputs = critic ? { returns: advantages, oldValues: new Float32Array(advantages.length) } : {};
const input = { tokens, advantages, oldLogprobs, ...criticInputs };
const seed = samplingSeed(c, iteration);
const compiles = () => trained.reduce((n, m) => n + m.programs.compiles.length, 0);
await updateStage(input, { actor, critic }, c, seed);
const compilesBefore = compiles();
const t0 = performance.now();
const metrics = await updateStage(input, { actor, critic }, c, seed);
const ms = performance.now() - t0;
for (const m of trained) await m.releasePrograms(); // writes the profiles

const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d;
if (values.profile) printKernelTime(dir, ms);
const peak = values.peak ? Number(values.peak) : (await matmulPeak(c.threads || 2)).wall;
console.log(
  JSON.stringify({
    bench: 'profile-update',
    run: loc.runId,
    iteration,
    rows: rows.length,
    seqLen: T,
    tokens: rows.reduce((n, t) => n + t.tokenIds.length, 0),
    trainedTokens: tokens.lossMask.reduce((n, x) => n + x, 0),
    ms: round(ms),
    compilesInMeasured: compiles() - compilesBefore,
    critic: critic !== null,
    skipped: metrics['actor/no_signal'] === 1,
    tflop: round(flops.update / 1e12, 2),
    peakGflops: round(peak),
    ofPeak: round(flops.update / (peak * 1e9) / (ms / 1000), 2),
    load: os.loadavg().map((x) => round(x, 2)),
  }),
);
