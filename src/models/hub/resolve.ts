/**
 * `--model org/name[@revision]`: the cache first, so a model already fetched (by starpo or by Python) starts a
 * run without touching the network, and a run resumed on a machine without it reads the very same snapshot;
 * the hub only for what the cache lacks, and never with HF_HUB_OFFLINE=1.
 */
import { ConfigError } from '../../errors.ts';
import { findCachedSnapshot, hubCacheDir, hubSpec, isOffline, offlineError, parseHubId } from './cache.ts';
import { pullHubModel, type PullProgress } from './pull.ts';

export interface ResolveHubOptions {
  readonly env?: NodeJS.ProcessEnv;
  /** Overrides HF_ENDPOINT. */
  readonly hubUrl?: string;
  readonly onProgress?: PullProgress;
  /** false: the cache or an error, as if offline but saying to pull. */
  readonly allowDownload?: boolean;
}

/** The snapshot directory for a hub id (pulled when missing); null when `spec` is not a hub id. */
export async function resolveHubModel(spec: string, o: ResolveHubOptions = {}): Promise<string | null> {
  const id = parseHubId(spec);
  if (id === null) return null;
  const env = o.env ?? process.env;
  const cached = await findCachedSnapshot(id.repo, id.revision, env);
  if (cached !== null) return cached;
  if (isOffline(env)) throw offlineError(id.repo, id.revision, env);
  if (o.allowDownload === false)
    throw new ConfigError(
      'model',
      `${hubSpec(id.repo, id.revision)} is not in the Hugging Face cache ${hubCacheDir(env)}: ` +
        `run starpo models pull ${hubSpec(id.repo, id.revision)}`,
    );
  return pullHubModel({ ...id, env, hubUrl: o.hubUrl, onProgress: o.onProgress });
}
