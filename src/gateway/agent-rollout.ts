/**
 * The rollout of a run whose agent is an external program (config `agent`): N groups × M episodes of the
 * program, each against a gateway serving the actor, turned into the rollout's trajectories (group, rollout
 * index, seed, tokens, mask, turns, return) — so the score, reward, filter, advantage and update stages, the
 * events, replay and report treat them as any rollout's. Both drivers hand it to rolloutStage and runValidation
 * (src/rl/stages/) as the run's episode source (`episodeSource`); the durable driver inside its rollout
 * activities, which heartbeat.
 * Sampling is the run's (temperature, top-p, top-k: the update's old log-probs assume it), each call seeded by
 * (rollout seed, group, episode, call number, the request's seed).
 */
import type { RlConfig } from '../rl/config-fields.ts';
import type { Trajectory } from '../rl/rollout.ts';
import type { GenerationBackend } from '../policy/engine/handle.ts';
import type { RunText } from '../rl/run-model.ts';
import { envEpisodes, type EpisodeSource } from '../rl/episode-source.ts';
import type { TurnGenerator } from '../tools/rollout-hook.ts';
import { type AgentTask, type EpisodeResult, runAgentEpisodes } from './agent-runner.ts';
import type { Episode } from './episodes.ts';
import type { ChatRequest } from './request.ts';
import { startGateway } from './server.ts';
import { episodeTrajectories, type MergeMode } from './trajectories.ts';
import { mixSeed } from '../random/mix-seed.ts';

export interface AgentRolloutSpec {
  readonly command: string;
  /** One task seed per group. */
  readonly seeds: readonly number[];
  readonly groupIds: readonly number[];
  readonly groupSize: number;
  readonly temperature: number;
  readonly topP?: number;
  readonly topK?: number;
  readonly maxResponseTokens: number;
  readonly maxContext: number;
  readonly samplingSeed: number;
  readonly split: 'train' | 'val';
  readonly iteration: number;
  readonly concurrency: number;
  readonly retries: number;
  readonly timeoutMs: number;
  readonly merge: MergeMode;
}

/** The environment name agent trajectories carry in events. */
export const AGENT_ENV_NAME = 'agent';

type AgentFields = Pick<
  RlConfig,
  | 'agent'
  | 'agentConcurrency'
  | 'agentRetries'
  | 'agentTimeoutMs'
  | 'agentMerge'
  | 'topP'
  | 'topK'
  | 'maxResponseTokens'
  | 'modelContext'
>;
type Played = Pick<
  AgentRolloutSpec,
  'seeds' | 'groupIds' | 'groupSize' | 'temperature' | 'samplingSeed' | 'split' | 'iteration'
>;

export function agentRolloutSpec(c: AgentFields, o: Played): AgentRolloutSpec {
  return {
    ...o,
    command: c.agent,
    topP: c.topP,
    topK: c.topK,
    maxResponseTokens: c.maxResponseTokens,
    maxContext: c.modelContext,
    concurrency: c.agentConcurrency,
    retries: c.agentRetries,
    timeoutMs: c.agentTimeoutMs,
    merge: c.agentMerge,
  };
}

/** A 32-bit seed from the rollout seed, the episode and the call: identical on every machine and attempt. */
function callSeed(spec: AgentRolloutSpec, episode: Episode, ordinal: number, request: ChatRequest): number {
  const task = episode.task!;
  const asked = request.seed === undefined ? 0 : Number(BigInt.asUintN(32, BigInt(request.seed)));
  return mixSeed(spec.samplingSeed, [task.group, task.index, ordinal, asked]);
}

/** An episode's trajectories, numbered within their group after the ones before them. */
function toTrajectories(results: readonly EpisodeResult[], spec: AgentRolloutSpec): Trajectory[] {
  const next = new Map<number, number>();
  return results.flatMap(({ task, episode, attempts, discardedCalls }) => {
    const pieces = episodeTrajectories(episode.calls, spec.merge, episode, episode.truncated);
    const diverged = episode.calls.filter((c) => c.diverged).length;
    return pieces.map((t) => {
      const index = next.get(task.group) ?? 0;
      next.set(task.group, index + 1);
      const extras = {
        episode: String(task.index),
        attempts: String(attempts),
        discardedCalls: String(discardedCalls),
        calls: String(episode.calls.length),
        ...(diverged > 0 ? { divergedCalls: String(diverged) } : {}),
      };
      return { ...t, group: task.group, index, env: AGENT_ENV_NAME, seed: task.seed, extras };
    });
  });
}

export async function agentRollout(
  spec: AgentRolloutSpec,
  policy: GenerationBackend,
  text: RunText,
): Promise<Trajectory[]> {
  const gateway = await startGateway({
    backend: policy,
    tokenizer: text.tokenizer,
    chat: text.chat,
    modelName: 'starpo-policy',
    maxContext: spec.maxContext,
    defaultMaxTokens: spec.maxResponseTokens,
    maxTokensCap: spec.maxResponseTokens,
    sampling: { temperature: spec.temperature, topP: spec.topP, topK: spec.topK },
    rowSeed: (episode, ordinal, request) => callSeed(spec, episode, ordinal, request),
  });
  try {
    const tasks: AgentTask[] = spec.seeds.flatMap((seed, g) =>
      Array.from({ length: spec.groupSize }, (_, index) => ({ group: spec.groupIds[g], index, seed })),
    );
    const results = await runAgentEpisodes(gateway, tasks, {
      command: spec.command,
      concurrency: spec.concurrency,
      retries: spec.retries,
      timeoutMs: spec.timeoutMs,
      split: spec.split,
      iteration: spec.iteration,
    });
    return toTrajectories(results, spec);
  } finally {
    await gateway.close();
  }
}

/** The run's agent program as an episode source: each request's episodes played through a gateway serving `policy`. */
export function agentEpisodes(c: AgentFields, policy: GenerationBackend, text: RunText): EpisodeSource {
  return (request) => agentRollout(agentRolloutSpec(c, request), policy, text);
}

/**
 * What plays a run's episodes, by its config: its agent program (config `agent`) through the gateway, else its
 * built-in environment (with `tools`, the turn generator of an agent that calls tools).
 */
export function episodeSource(
  c: RlConfig,
  policy: GenerationBackend,
  text: RunText,
  tools?: TurnGenerator,
): EpisodeSource {
  return c.agent ? agentEpisodes(c, policy, text) : envEpisodes(c, policy, text, tools);
}
