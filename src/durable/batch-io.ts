/**
 * Reading and writing the iteration's data between activities: trajectories as JSON (numbers survive
 * JSON exactly), per-token arrays in the binary artifact format, small records as JSON. Every stage
 * after rollout rebuilds the assembled batch from the trajectories (cheap and deterministic) instead
 * of shipping a second copy of it.
 */
import { assemble, type AssembledBatch } from '../rl/assemble.ts';
import type { ScoredBatch } from '../rl/kept-rows.ts';
import type { Trajectory } from '../rl/rollout.ts';
import type { CollapseProbe } from '../events/index.ts';
import type { CheckpointId } from '../storage/index.ts';
import { packArtifact, unpackArtifact } from './artifact-codec.ts';
import { artifactKey, type ArtifactStore } from '../storage/artifacts.ts';
import type { RunRef, StageInput } from './protocol.ts';
import type { CheckpointRef } from '../run/checkpoint.ts';

export const json = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));
export const parse = <T>(bytes: Buffer): T => JSON.parse(bytes.toString('utf8')) as T;

/** The checkpoint the stage reads its policy from. */
export const policyId = (input: StageInput): CheckpointId => ({
  runId: input.run.runId,
  lineageId: input.policy.lineageId,
  iteration: input.policy.iteration,
});

export const checkpointId = (run: RunRef, ref: CheckpointRef): CheckpointId => ({
  runId: run.runId,
  lineageId: ref.lineageId,
  iteration: ref.iteration,
});

/** Where stage `stage` of the input's iteration (in its own lineage) keeps artifact `part`. */
export const keyOf = (input: { run: RunRef; iteration: number }, stage: string, part: string): string =>
  artifactKey({ runId: input.run.runId, lineageId: input.run.lineageId, iteration: input.iteration }, stage, part);

export async function loadTrajectories(artifacts: ArtifactStore, keys: readonly string[]): Promise<Trajectory[]> {
  const parts = await Promise.all(keys.map((k) => artifacts.get(k)));
  return parts.flatMap((p) => parse<Trajectory[]>(p));
}

export interface LoadedBatch {
  trajectories: Trajectory[];
  all: AssembledBatch;
}

export async function loadBatch(artifacts: ArtifactStore, keys: readonly string[]): Promise<LoadedBatch> {
  const trajectories = await loadTrajectories(artifacts, keys);
  return { trajectories, all: assemble(trajectories) };
}

/**
 * The iteration's collapse probe (written by score when due). Not a bulky stage: the publish activity
 * reads it for the IterationEvent, also on a retry after the bulky artifacts are gone.
 */
export const collapseProbeKey = (input: { run: RunRef; iteration: number }): string =>
  keyOf(input, 'collapse', 'probe.json');

/** The probe, or null when the iteration did not compute one. */
export async function loadCollapseProbe(
  artifacts: ArtifactStore,
  input: { run: RunRef; iteration: number },
): Promise<CollapseProbe | null> {
  const key = collapseProbeKey(input);
  return (await artifacts.has(key)) ? parse<CollapseProbe>(await artifacts.get(key)) : null;
}

/** The trained rows' scores ([rows, T] each, in the order of their row indices) with the stage's metrics. */
export const packScored = (s: ScoredBatch): Buffer =>
  packArtifact({ metrics: s.metrics }, { logprobs: s.logprobs, values: s.values, refLogprobs: s.refLogprobs });

export function unpackScored(bytes: Buffer, key: string): ScoredBatch {
  const { meta, arrays } = unpackArtifact<{ metrics: Record<string, number> }>(bytes, key);
  const a = arrays as Record<string, Float32Array>;
  return { logprobs: a.logprobs, values: a.values, refLogprobs: a.refLogprobs, metrics: meta.metrics };
}
