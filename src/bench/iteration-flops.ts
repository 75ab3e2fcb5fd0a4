/**
 * The model FLOPs one RL iteration cannot do without, per stage, from its trajectory events and config (the count of
 * policy/model/flops.ts: every product's multiply-adds, attention over the causal context): over the measured MatMul
 * peak, the least time each stage could take on the machine if every product ran at the peak and nothing else took
 * time — its floor. What a target below the floor would need is fewer FLOPs, not a faster engine.
 *
 * - rollout: every token of every trajectory up to its last model-written one through the actor once (prefill or
 *   decode: the KV cache keeps each row's keys across turns), a group's shared first prompt once (the shared-prefix
 *   prefill), the LM head only for the tokens the model wrote (a prompt's last token's head samples the first);
 * - score: the trained rows through each scoring model — the actor when old log-probs are recomputed, the critic,
 *   the reference when there is a KL term — nothing when the update will skip (no critic, no signal); each row up to
 *   its last trained token (what follows reaches no loss term: the kept rows' attention ends there), the LM head on
 *   the trained tokens only (what the loss reads; programs/head-rows.ts);
 * - update: the trained rows (up to their last trained token, the LM head on the trained ones) forward and
 *   backward, ppoEpochs times, for the actor (unless it skipped) and the critic: 3 forwards' worth with full
 *   fine-tuning (the input and weight gradients), 2 under LoRA (the frozen weights' gradients are not computed; the
 *   adapters' products are left out), in the update's own seeded mini-batches.
 * Score and update count a group's shared prompt once when the models pack prompts (packPrefixes) — the update once
 * per mini-batch holding rows of the group, as the weights change between mini-batches. The critic's
 * forward has no LM head. The collapse probe and validation are not counted (bench iteration leaves them out), nor
 * DAPO's extra sampling rounds' choice (the filter is applied to every group played).
 */
import { roleCode } from '../agent/chat-format.ts';
import type { TrajectoryEvent } from '../events/index.ts';
import type { ModelConfig } from '../policy/io/config.ts';
import { heldParams, packsPrefixes } from '../policy/engine/policy.ts';
import { forwardFlopsPerToken } from '../policy/model/flops.ts';
import { buildLayout } from '../policy/model/layout.ts';
import { hasReferenceModel, type RlConfig } from '../rl/config.ts';
import { loraOf } from '../rl/run-model.ts';
import { samplingSeed } from '../rl/seeds.ts';
import { miniBatches } from '../rl/update.ts';
import { trainedRows } from '../rl/stages/filter.ts';
import { compactBatch, trajectoryRecordOf } from '../replay/records.ts';
import { packPrefixesOption } from '../run/models.ts';

export interface IterationFlops {
  readonly rollout: number;
  readonly score: number;
  readonly update: number;
}

export interface IterationFlopsInput {
  readonly model: ModelConfig;
  readonly config: RlConfig;
  /** The iteration's train trajectories in rollout order (replay/records.ts rolloutOrder), as the batch holds them. */
  readonly trajectories: readonly TrajectoryEvent[];
  /** Whether scoring and training pack a group's shared prompt (the models' packPrefixes, resolved). */
  readonly packed: boolean;
  /** The update skipped the actor step (no trained token had a non-zero advantage: actor/no_signal 1). */
  readonly actorSkipped: boolean;
}

/**
 * Forward FLOPs of tokens at positions from+1 … to of one sequence (causal: position p attends to p keys), without
 * the LM head. The count is linear in the context, so the sum is the count at the mean context.
 */
function spanFlops(model: ModelConfig, from: number, to: number): number {
  if (to <= from) return 0;
  return (to - from) * (forwardFlopsPerToken(model, (from + 1 + to) / 2) - headFlops(model));
}

/** The LM head's FLOPs for one token. */
const headFlops = (model: ModelConfig): number => 2 * model.hiddenSize * model.vocabSize;

const ASSISTANT = String(roleCode('assistant'));

/**
 * The tokens of a row that scoring and training compute: up to its last model-written (trained) token, as the kept
 * rows' attention ends there (rl/kept-rows.ts endAtLastTrained); the whole row when it has none.
 */
function trainedLength(t: TrajectoryEvent): number {
  const last = t.tokenRoles.lastIndexOf(ASSISTANT);
  return last >= 0 ? last + 1 : t.tokenIds.length;
}

/** The tokens the model wrote in a row. */
function written(t: TrajectoryEvent): number {
  let n = 0;
  for (const role of t.tokenRoles) if (role === ASSISTANT) n++;
  return n;
}

/**
 * Forward FLOPs of the rows (of each row its first `length(row)` tokens) without the LM head, a group's shared first
 * prompt once per group when `shared`.
 */
function rowsFlops(
  model: ModelConfig,
  rows: readonly TrajectoryEvent[],
  shared: boolean,
  length: (t: TrajectoryEvent) => number = trainedLength,
): number {
  const groups = new Map<number, TrajectoryEvent[]>();
  for (const t of rows) groups.set(t.group, [...(groups.get(t.group) ?? []), t]);
  let flops = 0;
  for (const members of groups.values()) {
    const prompt = shared ? Math.min(...members.map((t) => t.turns[0]?.promptTokens ?? 0)) : 0;
    flops += spanFlops(model, 0, prompt);
    for (const t of members) flops += spanFlops(model, prompt, length(t));
  }
  return flops;
}

/** Whether the run's actor packs a group's shared prompt in scoring and training, as the run's policy decides it. */
export function runPacksPrefixes(c: RlConfig, model: ModelConfig): boolean {
  return packsPrefixes(packPrefixesOption(c), heldParams(buildLayout(model, 'actor', loraOf(c))));
}

/** The iteration's FLOPs per stage (module comment). */
export function iterationFlops(input: IterationFlopsInput): IterationFlops {
  const { model, config: c, trajectories, packed, actorSkipped } = input;
  const records = trajectories.map((e) => trajectoryRecordOf(e, []));
  const trained = trainedRows(c, compactBatch(trajectories, records)).map((r) => trajectories[r]);
  const headOnWritten = (rows: readonly TrajectoryEvent[]) =>
    headFlops(model) * rows.reduce((sum, t) => sum + written(t), 0);
  const actorFlops = (rows: readonly TrajectoryEvent[]) => rowsFlops(model, rows, packed) + headOnWritten(rows);
  const criticFlops = (rows: readonly TrajectoryEvent[]) => rowsFlops(model, rows, packed);
  const actor = actorFlops(trained);
  const critic = c.critic ? criticFlops(trained) : 0;
  const scoring = actorSkipped && !c.critic ? 0 : 1;
  const recompute = c.oldLogprobs === 'recompute' ? actor : 0;
  const reference = hasReferenceModel(c) ? actor : 0;
  const backward = c.loraRank > 0 ? 2 : 3;
  const iteration = trajectories[0]?.iteration ?? 0;
  const batches = miniBatches(trained.length, c.miniBatchSize, c.ppoEpochs, samplingSeed(c, iteration));
  const batchRows = batches.map((rows) => rows.map((r) => trained[r]));
  const trainedFlops = (perBatch: (rows: readonly TrajectoryEvent[]) => number) =>
    batchRows.reduce((sum, rows) => sum + perBatch(rows), 0);
  return {
    rollout: rowsFlops(model, trajectories, true) + headOnWritten(trajectories),
    score: scoring * (recompute + critic + reference),
    update: backward * ((actorSkipped ? 0 : trainedFlops(actorFlops)) + (c.critic ? trainedFlops(criticFlops) : 0)),
  };
}
