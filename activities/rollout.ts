/**
 * rolloutShard and validate (task queue "rollout"). A shard plays its groups in chunks; each finished
 * chunk is written to its artifact key, its trajectory events are appended to Kafka exactly once, and only
 * then is it heartbeated as done — so a retried shard (say, its worker was killed) skips the chunks it finds
 * in the heartbeat details and replays the rest. Per-episode seeds make any split sample what the whole
 * rollout would; a chunk redone after a crash writes the same bytes, and its events, found on the topic
 * where the earlier attempt's fence says, are not appended again.
 */
import { activity, resumeFrom } from '../src/durable/boundary.ts';
import { appendExactlyOnce } from '../src/durable/event-fence.ts';
import { json, keyOf, policyId } from '../src/durable/batch-io.ts';
import {
  chunksOf,
  toWire,
  type RolloutShardInput,
  type ShardResult,
  type ValidateInput,
  type WireMetrics,
} from '../src/durable/protocol.ts';
import type { WorkerResources } from '../src/durable/resources.ts';
import { runValidation } from '../src/rl/stages/validate.ts';
import { rolloutStage } from '../src/rl/stages/rollout.ts';
import { toolTurns } from '../src/rl/tool-use.ts';
import { trajectoryEvents } from '../src/run/events.ts';
import { resolveRunModel } from '../src/rl/run-model.ts';
import { log } from '../src/log.ts';
import { episodeSource } from '../src/gateway/agent-rollout.ts';

/** A chunk's name within its iteration: sampling round, shard, chunk. */
const chunkName = (input: RolloutShardInput, k: number): string => `r${input.round ?? 0}-s${input.shard}-c${k}`;

interface ShardProgress {
  /** Chunks whose artifact is written and whose events are durable. */
  done: number[];
  chunks: number;
}

export function rolloutActivities(r: WorkerResources) {
  const rolloutShard = activity('rolloutShard', async (input: RolloutShardInput, beat): Promise<ShardResult> => {
    const c = await r.config(input.run);
    const run = await resolveRunModel(c);
    const chunks = chunksOf(input.groups, input.chunkGroups);
    const keys = chunks.map((_, k) => keyOf(input, 'rollout', `${chunkName(input, k)}.json`));
    const done = new Set(resumeFrom<ShardProgress>()?.done ?? []);
    if (done.size > 0) log.info({ shard: input.shard, done: [...done] }, 'rollout shard resumes from heartbeat');
    const ids = { runId: input.run.runId, lineageId: input.run.lineageId };
    for (const [k, groups] of chunks.entries()) {
      if (done.has(k)) continue;
      const startedAt = new Date();
      log.info(
        { shard: input.shard, chunk: k, groups, iteration: input.iteration, pid: process.pid },
        'rollout chunk started',
      );
      const trajectories = await r.rolloutModels.use(c, r.store(input.run.storeUri), policyId(input), (m) =>
        rolloutStage(
          c,
          input.iteration,
          episodeSource(c, m.actor, run, toolTurns(c, run.tokenizer, r.sandbox(c))),
          groups,
        ),
      );
      // The artifact first, then the events exactly once: a retry after either finds it done (appendExactlyOnce).
      await r.artifacts(input.run.storeUri).put(keys[k], json(trajectories));
      // policyVersion: the checkpoint whose weights played them
      const events = trajectoryEvents(ids, input.iteration, input.policy.iteration, trajectories, 'train', startedAt);
      await appendExactlyOnce(r, input.run, input.iteration, chunkName(input, k), events);
      done.add(k);
      beat.progress({ done: [...done].sort((a, b) => a - b), chunks: chunks.length });
      beat.now();
    }
    return { keys, trajectories: input.groups.length * c.groupSize };
  });

  /** Validation of the policy just written (checkpoint i), on the fixed validation seeds. */
  const validate = activity('validate', async (input: ValidateInput): Promise<{ metrics: WireMetrics }> => {
    const c = await r.config(input.run);
    const run = await resolveRunModel(c);
    const startedAt = new Date();
    const policy = { runId: input.run.runId, ...input.policy };
    const val = await r.rolloutModels.use(c, r.store(input.run.storeUri), policy, (m) =>
      runValidation(c, episodeSource(c, m.actor, run, toolTurns(c, run.tokenizer, r.sandbox(c))), c.valSamples),
    );
    const ids = { runId: input.run.runId, lineageId: input.run.lineageId };
    const events = trajectoryEvents(ids, input.iteration, input.policy.iteration, val.trajectories, 'val', startedAt);
    await appendExactlyOnce(r, input.run, input.iteration, 'validate', events);
    return { metrics: toWire(val.metrics) };
  });

  return { rolloutShard, validate };
}
