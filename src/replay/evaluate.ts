/**
 * Evaluating a saved actor: load it from a run's checkpoint (a given iteration, or the newest of the
 * surviving history), play the validation protocol of the trainer (runValidation: fixed seeds, several
 * samples per seed, the chosen temperature) on any environment preset, and set the oracle's ceiling on
 * the same seeds and budget beside it.
 */
import { envSpecId, oracleSuccess, resolveEnvConfig } from '../envs/index.ts';
import type { Policy } from '../policy/engine/policy.ts';
import type { RlConfig } from '../rl/config.ts';
import { runValidation } from '../rl/stages/validate.ts';
import { validationSeeds } from '../rl/seeds.ts';
import { openSandbox, toolTurns } from '../rl/tool-use.ts';
import { basename, resolve } from 'node:path';
import { ConfigError } from '../errors.ts';
import { checkCapacity } from '../rl/capacity.ts';
import { configFromJSON, resolveConfig } from '../rl/config.ts';
import { createActor, loadPretrained } from '../run/models.ts';
import { type RunModel, resolveRunModel } from '../rl/run-model.ts';
import { loadRunCheckpoint } from '../run/checkpoint.ts';
import { createCheckpointStore, createLocalCheckpointStore, type CheckpointId } from '../storage/index.ts';
import { sealedRunConfig } from '../run/stored-run.ts';
import { createSealedRunReader } from '../run/stored-run.ts';
import { chooseCheckpoint, parseCheckpointRef } from '../run/checkpoint-ref.ts';
import { readRunConfig, type RunLocation } from '../run/location.ts';
import { episodeSetup } from './reenact.ts';
import { VAL_SUCCESS_RATE, passAtKMetric, valMetric } from '../rl/metric-names.ts';
import { modelSpec } from '../models/resolve.ts';
import { formatRates, type FormatRates } from '../rl/format-rates.ts';
import { episodeSource } from '../gateway/agent-rollout.ts';

export interface EvalOptions {
  /** "<run-dir>" or "<run-dir>@<iteration>" (a run id under runsDir works too). */
  checkpoint?: string;
  /** Instead of a checkpoint: a Hugging Face model directory, evaluated with its own weights (before any RL). */
  model?: string;
  /** Config overrides for a model evaluation (`key=value`: template, maxResponseTokens, …). */
  overrides?: readonly string[];
  /** Instead of overrides: the whole config a model is evaluated under (a run's, before it trained). */
  config?: RlConfig;
  runsDir?: string;
  /**
   * A durable run's store (`s3://bucket/prefix/`): the checkpoint, the run's config and its sealed events (which
   * lineage survives) are read from there instead of the run's local directory.
   */
  storeUri?: string;
  /** Environment preset; default: the run's. */
  env?: string;
  seeds?: number;
  samples?: number;
  temperature?: number;
  /**
   * Tokens one turn may write; default: the run's. Compare two checkpoints under the same limit: a warm start run
   * at 24 and the RL run that continued it at 64 differ in how many answers are cut, not only in their weights.
   */
  maxResponseTokens?: number;
}

export interface EvalResult {
  runId: string;
  checkpoint: CheckpointId;
  env: string;
  /** The environment-spec id of the evaluated environment (budget included): compare only equal ids. */
  envSpecId: string;
  seeds: number;
  samples: number;
  temperature: number;
  successRate: number;
  /** pass@1 and pass@samples. */
  passAtK: Record<string, number>;
  /** Mean over the same seeds of the best success probability any policy reaches (envs/oracle.ts). */
  oracleSuccess: number;
  /** Success per validation seed (mean over its samples), in seed order: paired comparisons of two checkpoints. */
  successBySeed: number[];
  /** Over every turn played: the shares with a parsed action, cut at the token limit, echoing the prompt. */
  format: FormatRates;
}

/**
 * The run's config with the evaluation's environment, seeds, samples, temperature and token limit, checked like any
 * config.
 */
export function evalConfig(c: RlConfig, o: EvalOptions): RlConfig {
  const env = o.env ?? c.env;
  resolveEnvConfig(env); // unknown presets fail here, naming the known ones
  const valTemperature = o.temperature ?? c.valTemperature;
  return resolveConfig({
    file: {
      ...c,
      env,
      valSeeds: o.seeds ?? c.valSeeds,
      valSamples: o.samples ?? 1,
      valTemperature,
      maxResponseTokens: o.maxResponseTokens ?? c.maxResponseTokens,
    },
  });
}

export async function evaluateCheckpoint(o: EvalOptions): Promise<EvalResult> {
  if ((o.checkpoint === undefined) === (o.model === undefined))
    throw new ConfigError('--checkpoint', 'give a checkpoint or --model, not both');
  if (o.model !== undefined) {
    const model = `model=${modelSpec(o.model)}`;
    const base = o.config
      ? resolveConfig({ file: { ...o.config }, overrides: [model] })
      : resolveConfig({ overrides: [model, ...(o.overrides ?? [])] });
    const c = evalConfig(base, o);
    const checkpoint = { runId: basename(resolve(o.model)), lineageId: 'pretrained', iteration: 0 };
    return evaluate(c, o, checkpoint, (actor, run) => loadPretrained({ actor, critic: null, ref: null }, run, c, true));
  }
  const ref = parseCheckpointRef(o.checkpoint!, o.runsDir);
  const { config, store, events } = o.storeUri === undefined ? localRun(ref) : durableRun(ref, o.storeUri);
  const c = evalConfig(await config(), o);
  const checkpoint = await chooseCheckpoint(ref, await store.list(ref.runId), ref.iteration, events);
  return evaluate(c, o, checkpoint, async (actor, run) => {
    await loadPretrained({ actor, critic: null, ref: null }, run, c, false); // a LoRA run's base
    await loadRunCheckpoint(store, checkpoint, { actor }, run.assets);
  });
}

/** Where a run's config, checkpoints and events are: its local directory... */
function localRun(ref: RunLocation) {
  return { config: () => readRunConfig(ref), store: createLocalCheckpointStore({ root: ref.root }), events: undefined };
}

/** ...or a durable run's store, its events the sealed copy there. */
function durableRun(ref: RunLocation, storeUri: string) {
  const config = async () => {
    const json = await sealedRunConfig(storeUri, ref.runId);
    if (json === undefined) throw new ConfigError('--checkpoint', `run ${ref.runId} has no config.json in ${storeUri}`);
    return configFromJSON(json, `${storeUri}${ref.runId}/config.json`);
  };
  return { config, store: createCheckpointStore(storeUri), events: createSealedRunReader(storeUri) };
}

async function evaluate(
  c: RlConfig,
  o: EvalOptions,
  checkpoint: CheckpointId,
  load: (actor: Policy, run: RunModel) => Promise<unknown>,
): Promise<EvalResult> {
  const samples = c.valSamples;
  const run = await resolveRunModel(c);
  checkCapacity(c, run.modelConfig, run.lora, { training: false });
  const actor = createActor(c, run);
  const sandbox = openSandbox(c);
  try {
    await load(actor, run);
    const { metrics, trajectories } = await runValidation(
      c,
      episodeSource(c, actor, run, toolTurns(c, run.tokenizer, sandbox)),
      samples,
    );
    const seeds = validationSeeds(c);
    const successBySeed = seeds.map((seed) => {
      const played = trajectories.filter((t) => t.seed === seed);
      return played.filter((t) => t.success).length / Math.max(1, played.length);
    });
    const { env } = episodeSetup(c);
    const oracle = oracleSuccess(env, validationSeeds(c));
    const passAtK = Object.fromEntries([1, samples].map(passAtKMetric).map((k) => [k, metrics[valMetric(k)]]));
    return {
      runId: checkpoint.runId,
      checkpoint,
      env: c.env,
      envSpecId: envSpecId(env),
      seeds: c.valSeeds,
      samples,
      temperature: c.valTemperature,
      successRate: metrics[VAL_SUCCESS_RATE],
      passAtK,
      oracleSuccess: oracle.successRate,
      successBySeed,
      format: formatRates(trajectories, run.tokenizer),
    };
  } finally {
    await sandbox?.close();
    await actor.close();
  }
}
