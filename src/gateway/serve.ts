/**
 * `starpo gateway` as a library function: the OpenAI-compatible gateway serving a Hugging Face model directory
 * (its own weights) or a run's checkpoint, to try an agent against, evaluate it, or record its calls
 * (GET /v1/episodes/<id> gives each episode's trajectories). Requests choose their own sampling; any API key
 * names an episode.
 */
import { ConfigError } from '../errors.ts';
import type { Policy } from '../policy/engine/policy.ts';
import { chooseCheckpoint, parseCheckpointRef } from '../run/checkpoint-ref.ts';
import { readRunConfig } from '../run/location.ts';
import { resolveConfig, type RlConfig } from '../rl/config.ts';
import { createActor, loadPretrained } from '../run/models.ts';
import { loadRunCheckpoint } from '../run/checkpoint.ts';
import { type RunModel, resolveRunModel } from '../rl/run-model.ts';
import { createLocalCheckpointStore } from '../storage/index.ts';
import { type Gateway, startGateway } from './server.ts';
import { modelSpec } from '../models/resolve.ts';

export interface ServeOptions {
  /** A Hugging Face model directory, served with its own weights ... */
  readonly model?: string;
  /** ... or "<run-dir>[@iteration]": a run's actor (default: its newest checkpoint). */
  readonly checkpoint?: string;
  readonly runsDir?: string;
  /** Config overrides (`key=value`: modelContext, chatThinking, threads, …). */
  readonly overrides?: readonly string[];
  readonly host?: string;
  readonly port?: number;
  /** New tokens of a request that sets no max_tokens. */
  readonly maxTokens?: number;
}

interface Served {
  c: RlConfig;
  run: RunModel;
  name: string;
  load: (actor: Policy) => Promise<unknown>;
}

async function servedModel(o: ServeOptions): Promise<Served> {
  if ((o.checkpoint === undefined) === (o.model === undefined)) {
    throw new ConfigError('--checkpoint', 'give a checkpoint or --model, not both');
  }
  if (o.model !== undefined) {
    const c = resolveConfig({ overrides: [`model=${modelSpec(o.model)}`, ...(o.overrides ?? [])] });
    const run = await resolveRunModel(c);
    return { c, run, name: c.model, load: (actor) => loadPretrained({ actor, critic: null, ref: null }, run, c, true) };
  }
  const ref = parseCheckpointRef(o.checkpoint!, o.runsDir);
  const c = resolveConfig({ file: JSON.parse(JSON.stringify(await readRunConfig(ref))), overrides: o.overrides });
  const run = await resolveRunModel(c);
  const store = createLocalCheckpointStore({ root: ref.root });
  const id = await chooseCheckpoint(ref, await store.list(ref.runId), ref.iteration);
  return {
    c,
    run,
    name: `${id.runId}@${id.iteration}`,
    load: async (actor) => {
      await loadPretrained({ actor, critic: null, ref: null }, run, c, false); // a LoRA run's base
      await loadRunCheckpoint(store, id, { actor }, run.assets);
    },
  };
}

export async function serveGateway(o: ServeOptions): Promise<Gateway & { readonly model: string }> {
  const { c, run, name, load } = await servedModel(o);
  const actor = createActor(c, run);
  try {
    await load(actor);
    const gateway = await startGateway({
      backend: actor,
      tokenizer: run.tokenizer,
      chat: run.chat,
      modelName: name,
      maxContext: c.modelContext,
      defaultMaxTokens: o.maxTokens ?? 512,
      openEpisodes: true,
      merge: c.agentMerge,
      host: o.host,
      port: o.port,
    });
    return { ...gateway, model: name, close: () => gateway.close().finally(() => actor.close()) };
  } catch (err) {
    await actor.close();
    throw err;
  }
}
