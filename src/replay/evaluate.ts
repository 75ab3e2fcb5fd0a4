/**
 * Evaluating a saved actor: load it from a run's checkpoint (a given iteration, or the newest of the
 * surviving history), play the validation protocol of the trainer (runValidation: fixed seeds, several
 * samples per seed, the chosen temperature) on any environment preset, and set the oracle's ceiling on
 * the same seeds and budget beside it.
 */
import { oracleSuccess, resolveEnvConfig } from '../envs/index.ts';
import { Policy } from '../policy/engine/policy.ts';
import type { RlConfig } from '../rl/config.ts';
import { runValidation, validationSeeds } from '../rl/iteration.ts';
import { openSandbox, toolTurns } from '../rl/tool-use.ts';
import { scratchModelConfig } from '../rl/models.ts';
import { loadRunCheckpoint } from '../rl/run-checkpoint.ts';
import { scratchTokenizer } from '../rl/vocabulary.ts';
import { createLocalCheckpointStore, type CheckpointId } from '../storage/index.ts';
import { chooseCheckpoint, parseCheckpointRef } from './checkpoint-ref.ts';
import { readRunConfig } from './location.ts';
import { episodeSetup } from './reenact.ts';

export interface EvalOptions {
  /** "<run-dir>" or "<run-dir>@<iteration>" (a run id under runsDir works too). */
  checkpoint: string;
  runsDir?: string;
  /** Environment preset; default: the run's. */
  env?: string;
  seeds?: number;
  samples?: number;
  temperature?: number;
}

export interface EvalResult {
  runId: string;
  checkpoint: CheckpointId;
  env: string;
  seeds: number;
  samples: number;
  temperature: number;
  successRate: number;
  /** pass@1 and pass@samples. */
  passAtK: Record<string, number>;
  /** Mean over the same seeds of the best success probability any policy reaches (envs/oracle.ts). */
  oracleSuccess: number;
}

/** The run's config with the evaluation's environment, seeds and temperature. */
function evalConfig(c: RlConfig, o: EvalOptions): RlConfig {
  const env = o.env ?? c.env;
  resolveEnvConfig(env); // unknown presets fail here, naming the known ones
  return { ...c, env, valSeeds: o.seeds ?? c.valSeeds, valTemperature: o.temperature ?? c.valTemperature };
}

export async function evaluateCheckpoint(o: EvalOptions): Promise<EvalResult> {
  const ref = parseCheckpointRef(o.checkpoint, o.runsDir);
  const c = evalConfig(await readRunConfig(ref), o);
  const samples = o.samples ?? 1;
  const store = createLocalCheckpointStore({ root: ref.root });
  const checkpoint = await chooseCheckpoint(ref, await store.list(ref.runId), ref.iteration);
  const tokenizer = scratchTokenizer();
  const actor = new Policy({
    config: scratchModelConfig(c, tokenizer), role: 'actor', seed: c.seed, tokenizer,
    threads: c.threads > 0 ? c.threads : undefined,
  });
  const sandbox = openSandbox(c);
  try {
    await loadRunCheckpoint(store, checkpoint, { actor });
    const { metrics } = await runValidation(c, actor, tokenizer, samples, toolTurns(c, tokenizer, sandbox));
    const oracle = oracleSuccess(episodeSetup(c).env, validationSeeds(c));
    const passAtK = Object.fromEntries([1, samples].map((k) => [`pass@${k}`, metrics[`val/pass@${k}`]]));
    return {
      runId: ref.runId, checkpoint, env: c.env, seeds: c.valSeeds, samples, temperature: c.valTemperature,
      successRate: metrics['val/success_rate'], passAtK, oracleSuccess: oracle.successRate,
    };
  } finally {
    await sandbox?.close();
    await actor.close();
  }
}
