/**
 * publish: publishes iteration i once its checkpoint is committed. Confirms the manifest the update
 * wrote is the visible one, appends the IterationEvent (training + validation metrics, stage timings),
 * the Echo-Trap warning if the detector fired, and the CheckpointEvent, seals the iteration's events into the
 * run's store (a copy of what Kafka holds, src/durable/seal-events.ts), applies the retention policy (keeping
 * the checkpoints lineages started from, as the embedded driver does), and drops the iteration's bulky
 * artifacts (the trajectories are on Kafka and sealed by now).
 */
import { activity } from '../src/durable/boundary.ts';
import { iterationArtifacts } from '../src/storage/artifacts.ts';
import { appendExactlyOnce } from '../src/durable/event-fence.ts';
import { loadCollapseProbe, parse } from '../src/durable/batch-io.ts';
import { retentionView } from '../src/durable/lineages.ts';
import { sealIteration } from '../src/durable/seal-events.ts';
import { fromWire, type PublishInput } from '../src/durable/protocol.ts';
import type { WorkerResources } from '../src/durable/resources.ts';
import { CorruptDataError } from '../src/errors.ts';
import { checkpointEvent, iterationEvents } from '../src/run/events.ts';
import { keptForReference, retentionOf } from '../src/run/checkpoint.ts';
import { applyRetention } from '../src/storage/index.ts';
import { updateRecordKey, type UpdateRecord } from './update.ts';

const BULKY_STAGES = ['rollout', 'sampling', 'score', 'reward', 'filter', 'advantage'];

export function publishActivity(r: WorkerResources) {
  return activity('publish', async (input: PublishInput): Promise<{ uri: string }> => {
    const c = await r.config(input.run);
    const artifacts = r.artifacts(input.run.storeUri);
    const { saved } = parse<UpdateRecord>(await artifacts.get(updateRecordKey(input)));
    const { store } = r.store(input.run.storeUri);
    const { manifest } = await store.load(input.run.runId, input.checkpoint.lineageId, input.checkpoint.iteration, {
      only: [],
    });
    const names = (m: typeof manifest) =>
      m.files
        .map((f) => `${f.name}:${f.sha256}`)
        .sort()
        .join();
    if (names(manifest) !== names(saved.manifest)) {
      throw new CorruptDataError(`checkpoint ${saved.uri}: the visible manifest is not the one the update wrote`);
    }
    const ids = { runId: input.run.runId, lineageId: input.run.lineageId };
    const w = input.warning;
    const warning = w && { iteration: input.iteration, message: w.message, evidence: fromWire(w.evidence) };
    // The fence keeps the name the append had before the activity was renamed: a run under way across the upgrade
    // must find its own fence, or a retried append would write the iteration's events twice.
    await appendExactlyOnce(r, input.run, input.iteration, 'checkpoint', [
      ...iterationEvents(c, ids, {
        iteration: input.iteration,
        metrics: fromWire(input.metrics),
        timingsMs: input.timingsMs,
        startedAt: new Date(input.startedAtMs),
        collapse: await loadCollapseProbe(artifacts, input),
        warning,
      }),
      checkpointEvent(saved),
    ]);
    await sealIteration(artifacts, input.run, input.iteration);
    const kept = keptForReference(c, input.run.runId);
    await applyRetention(await retentionView(store, artifacts, input.run.runId, kept), input.run.runId, retentionOf(c));
    if (!input.keepArtifacts) {
      // The update's small record stays: a retry of this activity still finds what to publish.
      const base = iterationArtifacts({
        runId: input.run.runId,
        lineageId: input.run.lineageId,
        iteration: input.iteration,
      });
      await Promise.all(BULKY_STAGES.map((stage) => artifacts.deletePrefix(`${base}${stage}/`)));
    }
    return { uri: saved.uri };
  });
}
