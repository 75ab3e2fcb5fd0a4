/**
 * What plays a stage's episodes. The rollout and validation stages ask for episodes (seeds, groups, sampling) and
 * get trajectories back; the driver decides who plays them: the built-in environments (`envEpisodes`, here) or an
 * external agent program through the OpenAI-compatible gateway (src/gateway/agent-rollout.ts `agentEpisodes`).
 * `episodeSource` there picks by the run's config, so the stages never reach into the gateway.
 */
import type { RlConfig } from './config.ts';
import { resolveEnvConfig } from '../envs/index.ts';
import type { ChatFormat, TemplateName } from '../agent/index.ts';
import { rollout, type RolloutSpec, type Trajectory } from './rollout.ts';
import type { GenerationBackend } from '../policy/engine/handle.ts';
import type { RunText } from './run-model.ts';
import { rescoreWithToolReward } from './tool-use.ts';
import type { TurnGenerator } from '../tools/rollout-hook.ts';

/** One stage's episodes: `groupSize` per seed, group `groupIds[g]` playing `seeds[g]`. */
export interface EpisodeRequest {
  readonly seeds: readonly number[];
  readonly groupIds: readonly number[];
  readonly groupSize: number;
  readonly temperature: number;
  readonly samplingSeed: number;
  readonly split: 'train' | 'val';
  readonly iteration: number;
}

export type EpisodeSource = (request: EpisodeRequest) => Promise<Trajectory[]>;

/**
 * The built-in environment of the run's config, played by `actor` (with `tools`, its turn generator, when the
 * agent calls tools); training episodes are scored by the run's tool reward when it has one (whole groups are in
 * one request, as OTC needs).
 */
export function envEpisodes(
  c: RlConfig,
  actor: GenerationBackend,
  text: RunText,
  tools?: TurnGenerator,
): EpisodeSource {
  return async (r) => {
    const spec = rolloutSpec(c, text.chat, [...r.seeds], r.groupSize, r.temperature, r.samplingSeed);
    const played = await rollout({ ...spec, groupIds: r.groupIds, turnGenerator: tools }, actor, text.tokenizer);
    return r.split === 'train' ? rescoreWithToolReward(c, played, text.tokenizer) : played;
  };
}

/** The rollout settings of the run's config for these seeds and sampling. */
export function rolloutSpec(
  c: RlConfig,
  chat: ChatFormat,
  seeds: number[],
  groupSize: number,
  temperature: number,
  samplingSeed: number,
): RolloutSpec {
  return {
    env: resolveEnvConfig(c.env),
    template: c.template as TemplateName,
    chat,
    seeds,
    groupSize,
    temperature,
    topP: c.topP,
    topK: c.topK,
    maxResponseTokens: c.maxResponseTokens,
    maxContext: c.modelContext,
    samplingSeed,
    formatPenalty: c.formatPenalty,
    budget: {
      maxTurns: c.maxTurns,
      maxActionsPerTurn: c.maxActionsPerTurn,
      maxActionsPerTrajectory: c.maxActionsPerTrajectory,
    },
  };
}
