/**
 * What a worker process shares among its activities: checkpoint and artifact stores by URI, one Kafka
 * event log per target (one idempotent producer, connected once; a transactional one per exactly-once
 * append), each run's config, and the model hosts. Activities get these through
 * `createActivities(resources)`, so tests can pass their own.
 */
import { configFromJSON, type RlConfig } from '../rl/config.ts';
import { lineageConfig } from '../rl/collapse-action.ts';
import { createKafkaEventLog, type ExactlyOnceEventLog } from '../events/index.ts';
import type { Provider } from '../policy/engine/session.ts';
import { createCheckpointStore, type CheckpointStore } from '../storage/index.ts';
import { configKey, createArtifactStore, type ArtifactStore } from '../storage/artifacts.ts';
import { ModelHost } from './model-host.ts';
import { openSandbox } from '../rl/tool-use.ts';
import type { CodeRunner } from '../tools/sandbox/pool.ts';
import type { EventsTarget, RunRef } from './protocol.ts';
import { loadBatch, type LoadedBatch } from './batch-io.ts';

/** Iterations whose batches a worker keeps (an asynchronous run's next one is read while the current one trains). */
const BATCHES_KEPT = 2;

export interface WorkerResources {
  store(uri: string): { uri: string; store: CheckpointStore };
  artifacts(uri: string): ArtifactStore;
  events(target: EventsTarget): ExactlyOnceEventLog;
  /**
   * The config the run's lineage trains with: the one startRun saved (cached: it never changes), learning
   * rates scaled for the lineage's forks (run.forks, onCollapse=fork).
   */
  config(run: RunRef): Promise<RlConfig>;
  /**
   * An iteration's trajectories and assembled batch from their artifact keys, read and assembled once for the
   * stages of that iteration on this worker (keys never change content: a retry writes the same bytes).
   * Shared between activities: read-only.
   */
  batch(storeUri: string, keys: readonly string[]): Promise<LoadedBatch>;
  /** The actor for rollouts and validation. */
  rolloutModels: ModelHost;
  /** Actor, critic and reference for scoring, updates and the warm-start. */
  trainModels: ModelHost;
  /**
   * The code sandbox of a run whose agent writes code (one per setting, kept for the worker's life); else undefined.
   */
  sandbox(c: RlConfig): CodeRunner | undefined;
  close(): Promise<void>;
}

export interface ResourceOptions {
  /**
   * Execution provider of every engine this worker starts (`starpo worker --provider`), overriding the run
   * config's rolloutProvider / updateProvider; default: the run's own setting per role.
   */
  provider?: Provider;
  /** Producer retries before an append fails (default 5, about 10 s). */
  kafkaRetries?: number;
}

function memo<T>(make: (key: string) => T): { get: (key: string) => T; all: () => T[] } {
  const cache = new Map<string, T>();
  return {
    get: (key) => {
      if (!cache.has(key)) cache.set(key, make(key));
      return cache.get(key)!;
    },
    all: () => [...cache.values()],
  };
}

export function createResources(options: ResourceOptions = {}): WorkerResources {
  const stores = memo((uri) => ({ uri, store: createCheckpointStore(uri) }));
  const artifacts = memo((uri) => createArtifactStore(uri));
  const logs = memo((key) => {
    const target = JSON.parse(key) as EventsTarget;
    return createKafkaEventLog({ ...target, retries: options.kafkaRetries });
  });
  const sandboxes = new Map<string, CodeRunner>();
  const configs = new Map<string, Promise<RlConfig>>();
  const batches = new Map<string, Promise<LoadedBatch>>();
  const rolloutModels = new ModelHost('actor', options.provider);
  const trainModels = new ModelHost('all', options.provider);
  return {
    store: stores.get,
    artifacts: artifacts.get,
    events: (target) =>
      logs.get(JSON.stringify({ topic: target.topic, brokers: target.brokers, retentionMs: target.retentionMs })),
    config(run) {
      const key = `${run.storeUri}|${run.runId}`;
      let config = configs.get(key);
      if (!config) {
        config = artifacts
          .get(run.storeUri)
          .get(configKey(run.runId))
          .then((b) => configFromJSON(b.toString('utf8'), `${run.storeUri}${configKey(run.runId)}`));
        configs.set(key, config);
        config.catch(() => configs.delete(key));
      }
      return config.then((c) => lineageConfig(c, run.forks ?? 0));
    },
    batch(storeUri, keys) {
      const key = `${storeUri}|${keys.join(',')}`;
      let found = batches.get(key);
      if (!found) {
        found = loadBatch(artifacts.get(storeUri), keys);
        batches.set(key, found);
        found.catch(() => batches.delete(key));
        for (const old of [...batches.keys()].slice(0, -BATCHES_KEPT)) batches.delete(old);
      }
      return found;
    },
    rolloutModels,
    trainModels,
    sandbox(c) {
      const key = `${c.sandboxProcesses}|${c.sandboxTimeoutMs}`;
      if (!sandboxes.has(key)) {
        const opened = openSandbox(c);
        if (!opened) return undefined;
        sandboxes.set(key, opened);
      }
      return sandboxes.get(key);
    },
    async close() {
      await Promise.all([
        ...logs.all().map((l) => l.close()),
        ...[...sandboxes.values()].map((s) => s.close()),
        rolloutModels.close(),
        trainModels.close(),
      ]);
    },
  };
}
