/**
 * What RAGEN-2's collapse probe costs on a finished run's own rollouts: the iteration's trajectories through the
 * probe (rl/collapse-probe.ts: collapseSamples first-turn responses, each scored after every group's prompt) with
 * the run's actor, twice; the second is measured. Prints JSON lines: with --profile onnxruntime's kernel time by
 * operator, then the probe's rows, tokens (real, and computed once packed) and wall-clock.
 *
 *   node --import tsx scripts/profile-collapse.ts <run directory> <iteration> [--profile]
 *
 * The actor is the run's initial one (its model, LoRA adapters fresh), not the iteration's: the arithmetic is the
 * same. STARPO_BENCH_SET=key=value,… overrides the run's config (e.g. collapseSamples=32).
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { printKernelTime } from './ort-profile.ts';
import { loadRunIteration } from './run-iteration.ts';

const USAGE = 'usage: profile-collapse.ts <run directory> <iteration> [--profile]';
const refuse = (message: string): never => {
  console.error(`profile-collapse: ${message}`);
  process.exit(2);
};
const { positionals, values } = (() => {
  try {
    return parseArgs({ allowPositionals: true, options: { profile: { type: 'boolean', default: false } } });
  } catch (err) {
    return refuse(`${(err as Error).message} (${USAGE})`);
  }
})();
const [runDir, iterationArg] = positionals;
if (!runDir || !(Number(iterationArg) > 0)) refuse(USAGE);
const dir = mkdtempSync(path.join(os.tmpdir(), 'starpo-profile-collapse-'));
if (values.profile) process.env.STARPO_ORT_PROFILE = path.join(dir, 'probe'); // read when each session is created

const { resolveRunModel } = await import('../src/rl/run-model.ts');
const { createModels } = await import('../src/run/models.ts');
const { collapseProbe } = await import('../src/rl/collapse-probe.ts');
const { samplingSeed } = await import('../src/rl/seeds.ts');
const { packSharedPrefixes } = await import('../src/policy/programs/prefix-pack.ts');
const { packPairCost } = await import('../src/policy/engine/policy.ts');

const iteration = Number(iterationArg);
const { loc, c, ...found } = await loadRunIteration(runDir, iteration, refuse);
// The probe reads a trajectory's group, tokens and their owners only.
const trajectories = found.trajectories.map((e) => ({
  group: e.group,
  ids: e.tokenIds,
  roles: Array.from(e.tokenRoles, Number),
})) as unknown as Parameters<typeof collapseProbe>[2];

const run = await resolveRunModel(c);
const { actor } = createModels(c, run.modelConfig, run.tokenizer);
await actor.initialize();
type ScoreBatch = Parameters<typeof actor.score>[0];
let b: ScoreBatch | undefined; // the batch the probe scored
const scorer = { score: (batch: ScoreBatch, t?: number) => ((b = batch), actor.score(batch, t)) };
const due = { ...c, collapseEvery: 1 }; // whatever the run's schedule, the probe runs here
const seed = samplingSeed(c, iteration);
await collapseProbe(due, 1, trajectories, scorer, seed);
const t0 = performance.now();
const probe = await collapseProbe(due, 1, trajectories, scorer, seed);
const ms = performance.now() - t0;
await actor.releasePrograms(); // writes the profiles

const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d;
if (values.profile) printKernelTime(dir, ms);
const sum = (xs: Float32Array) => xs.reduce((n, x) => n + x, 0);
const packed = b ? packSharedPrefixes(b, { pairCost: packPairCost(run.modelConfig, 'actor') }) : null;
console.log(
  JSON.stringify({
    bench: 'profile-collapse',
    run: loc.runId,
    iteration,
    pairs: probe?.rows ?? 0,
    columns: probe?.columns ?? 0,
    rows: b?.batch ?? 0,
    tokens: b ? sum(b.attentionMask) : 0,
    readTokens: b?.headMask ? sum(b.headMask) : 0,
    packedRows: packed ? packed.batch.batch : null,
    packedTokens: packed ? sum(packed.batch.attentionMask) : null,
    ms: round(ms),
    load: os.loadavg().map((x) => round(x, 2)),
  }),
);
