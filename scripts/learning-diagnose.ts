/**
 * Diagnosis of a learning case: trains it like `starpo bench learning` does (same warm start, same
 * measurement), printing each iteration's learning signals to stderr as it goes (success, in-group
 * std, kept trajectories, entropy, gradient norm, clip fraction, approximate KL, advantages, value
 * loss, explained variance, actions per turn) and the bench line to stdout at the end.
 * Usage: node --import tsx scripts/learning-diagnose.ts <case> [preset=<name>] [warm.key=value ...] [key=value ...]
 * (STARPO_BENCH_WARM_DIR reuses a warm start trained before.)
 */
import { LEARNING_CASES, measureCase, trainCase } from '../src/bench/learning.ts';
import type { PresetName } from '../src/rl/presets.ts';

const SIGNALS = [
  'success_rate',
  'val/success_rate',
  'in_group_std/all',
  'in_group_std/kept',
  'kept/trajectories',
  'entropy/mean',
  'actor/grad_norm',
  'actor/clip_frac',
  'actor/approx_kl',
  'advantages/mean',
  'advantages/min',
  'advantages/max',
  'critic/value_loss',
  'values/explained_variance',
  'actions/per_turn',
  'turns/mean',
  'logprobs/behaviour_gap_max',
] as const;

const [name, ...args] = process.argv.slice(2);
const found = LEARNING_CASES.find((c) => c.name === name);
if (!found) throw new Error(`no case ${name}: ${LEARNING_CASES.map((c) => c.name).join(', ')}`);
// `preset=<name>` swaps the case's algorithm preset; `warm.<key>=<value>` overrides its warm start (trained
// again, under STARPO_BENCH_WARM_DIR if set: give each warm-start variant its own directory); the rest its RL config.
const preset = args.find((a) => a.startsWith('preset='))?.slice('preset='.length) as PresetName | undefined;
const warm = args.filter((a) => a.startsWith('warm.')).map((a) => a.slice('warm.'.length));
const extra = args.filter((a) => !a.startsWith('preset=') && !a.startsWith('warm.'));
const warmStart = found.warmStart && { ...found.warmStart, overrides: [...found.warmStart.overrides, ...warm] };
const k = { ...found, preset: preset ?? found.preset, warmStart };
const short = (x: number | undefined) => (x === undefined ? '-' : Math.abs(x) >= 100 ? x.toFixed(0) : x.toPrecision(3));
const trained = await trainCase(k, extra, (r) => {
  const m = r.metrics;
  process.stderr.write(`${r.iteration} ${SIGNALS.map((s) => `${s}=${short(m[s])}`).join(' ')}\n`);
});
console.log(JSON.stringify({ ...(await measureCase(k, trained)), settings: extra }));
