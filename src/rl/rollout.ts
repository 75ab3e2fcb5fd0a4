/**
 * The rollout manager: N environment groups × M rollouts (one seed per group), played turn by turn
 * with one batched generation call per turn across every still-active episode:
 *   reset → build inputs → generate → parse → step → collect.
 * Environment state (Episode) and tokens (ContextBuilder) stay in their own modules; this file only
 * moves text and ids between them and the policy. Output is plain serialisable data.
 */
import {
  ContextBuilder,
  Episode,
  TEMPLATES,
  loggedReturn,
  signedPenalty,
  type ChatFormat,
  type TemplateName,
} from '../agent/index.ts';
import type { TextTokenizer } from '../agent/types.ts';
import { createEnv, resolveEnvConfig, type EnvConfig } from '../envs/index.ts';
import type { TurnGeneration, TurnGenerator } from '../tools/rollout-hook.ts';
import type { ToolCallRecord } from '../tools/types.ts';
import type { Turn } from '../events/index.ts';
import { mixSeed } from '../random/mix-seed.ts';
import type { GenerationBackend, RolloutRequest } from '../policy/engine/handle.ts';

/**
 * A turn as the rollout records it: the logged turn (events/types.ts Turn, one set of names for both),
 * with what the log leaves out (the parsed actions, how many pieces the answer proposed, where the reward
 * goes in the tokens) and the tool calls as the tools run them; the log keeps executedActions.length as
 * actionsValid.
 */
export interface RolloutTurn extends Omit<Turn, 'actionsValid' | 'toolCalls'> {
  /** The actions the parser read from the response (after truncation to the per-turn budget). */
  parsedActions: string[];
  /** Parsed actions plus the pieces the parser could not match. */
  actionsProposed: number;
  /** Token index of the turn's last model-written token. */
  rewardPosition: number;
  /** The turn's tool calls (tool-integrated rollouts only). */
  toolCalls?: ToolCallRecord[];
  /**
   * How the turn's generation ended: `length` = cut at maxResponseTokens. Not in the event log (replay does not
   * need it); absent on trajectories rebuilt from events and on external agents' turns.
   */
  finishReason?: 'stop' | 'length';
}

export interface Trajectory {
  group: number;
  index: number;
  env: string;
  seed: number;
  ids: number[];
  /** 1 exactly on model-written tokens. */
  mask: number[];
  /** Each token's owner: its index in TOKEN_ROLES (template, system, user, observation, assistant, tool). */
  roles: number[];
  /** Sampling log-prob of each model-written token (aligned with ids; 0 elsewhere). */
  logprobs: number[];
  /**
   * Entropy of the distribution each model-written token was sampled from (aligned with ids; 0 elsewhere);
   * absent when the generation backend reports none (scripted policies).
   */
  entropy?: number[];
  turns: RolloutTurn[];
  promptTokens: number;
  return: number;
  success: boolean;
  /** Ran into the model's context limit before the episode ended. */
  truncated: boolean;
  /** Notes the trajectory event carries beside `truncated` (an external agent's episode: attempts, calls, …). */
  extras?: Record<string, string>;
}

export interface RolloutSpec {
  env: EnvConfig;
  template: TemplateName;
  /** How messages are wrapped into tokens: the model's chat template, or the template's own wrapping. */
  chat: ChatFormat;
  /** One seed per group; every group plays its seed groupSize times. */
  seeds: readonly number[];
  /** The groups' numbers in the iteration (default 0..seeds.length−1); a shard plays a subset. */
  groupIds?: readonly number[];
  groupSize: number;
  temperature: number;
  topP?: number;
  topK?: number;
  maxResponseTokens: number;
  /** Longest sequence the model accepts: an episode whose next prompt would not fit ends early. */
  maxContext: number;
  /** Base seed of the sampling streams; each (group, rollout, turn) derives its own from it. */
  samplingSeed: number;
  /** Reward added to a turn with a dropped or unparsable action (≤ 0; default −0.1). */
  formatPenalty?: number;
  /** Overrides the environment config's budget (0 or absent = keep). */
  budget?: { maxTurns?: number; maxActionsPerTurn?: number; maxActionsPerTrajectory?: number };
  /** Plays each turn instead of the single generate call (tool-integrated turns: src/tools/rollout-hook.ts). */
  turnGenerator?: TurnGenerator;
}

interface Live {
  group: number;
  seed: number;
  index: number;
  episode: Episode;
  ctx: ContextBuilder;
  /** Where each turn's generated tokens start, with their sampling log-probs and entropies (and tool-turn extras). */
  sampled: {
    start: number;
    logprobs: number[];
    entropies?: number[];
    toolCalls?: ToolCallRecord[];
    finishReason: 'stop' | 'length';
  }[];
  truncated: boolean;
}

/** The environment config with the run's budget overrides applied (0 or absent = keep). */
export function withBudget(env: EnvConfig, budget: RolloutSpec['budget']): EnvConfig {
  const out: Record<string, unknown> = { ...env };
  for (const [k, v] of Object.entries(budget ?? {})) if (v) out[k] = v;
  return resolveEnvConfig(out as { type: string } & Record<string, unknown>);
}

/** A 32-bit seed per (group, rollout index, turn): a fixed mix, identical on every machine. */
function episodeSeed(spec: RolloutSpec, l: { group: number; index: number }, turn: number): number {
  return mixSeed(spec.samplingSeed, [l.group, l.index, turn]);
}

function startEpisodes(spec: RolloutSpec, tokenizer: TextTokenizer): Live[] {
  const env = withBudget(spec.env, spec.budget);
  const template = TEMPLATES[spec.template];
  const live: Live[] = [];
  spec.seeds.forEach((seed, group) => {
    for (let index = 0; index < spec.groupSize; index++) {
      const episode = new Episode(createEnv(env), env, template, { formatPenalty: spec.formatPenalty });
      const ctx = new ContextBuilder(tokenizer, spec.chat);
      for (const message of episode.start(seed)) ctx.addMessage(message);
      live.push({ group: spec.groupIds?.[group] ?? group, seed, index, episode, ctx, sampled: [], truncated: false });
    }
  });
  return live;
}

/** Plays every episode to its end and returns one trajectory per (group, rollout index), in that order. */
export async function rollout(
  spec: RolloutSpec,
  policy: GenerationBackend,
  tokenizer: TextTokenizer,
): Promise<Trajectory[]> {
  const all = startEpisodes(spec, tokenizer);
  const { stop, stopTokenIds } = spec.chat;
  for (let turn = 0; ; turn++) {
    const active = all.filter((l) => !l.episode.done && !l.truncated);
    for (const l of active) if (l.ctx.length + spec.maxResponseTokens + 1 > spec.maxContext) l.truncated = true;
    const playing = active.filter((l) => !l.truncated);
    if (playing.length === 0) break;
    const prompts = playing.map((l) => l.ctx.beginResponse());
    const request: RolloutRequest = {
      prompts,
      maxNewTokens: spec.maxResponseTokens,
      rowSeeds: playing.map((l) => episodeSeed(spec, l, turn)),
      sampling: { temperature: spec.temperature, topP: spec.topP, topK: spec.topK },
      // A model's own template ends turns with eos tokens; the written-out formats with their stop text.
      stopStrings: stopTokenIds.length ? [] : [stop],
      stopTokenIds,
    };
    const generations: TurnGeneration[] = spec.turnGenerator
      ? await spec.turnGenerator(
          policy,
          request,
          playing.map((l) => l.episode.env),
        )
      : await policy.generate(request);
    playing.forEach((l, i) => {
      const g = generations[i];
      const text = g.answerText ?? tokenizer.decode(g.tokens);
      // Stopped by the format's own stop (another eos, or the length limit, gets the stop as template).
      const wroteStop = g.finishReason === 'stop' && tokenizer.decode(g.tokens).endsWith(stop);
      const { logprobs, entropies, toolCalls, finishReason } = g;
      l.sampled.push({ start: l.ctx.length, logprobs, entropies, toolCalls, finishReason });
      l.ctx.addResponse(g.tokens, wroteStop, g.mask); // tool results: mask 0, not trained
      const record = l.episode.respond(wroteStop && text.endsWith(stop) ? text.slice(0, -stop.length) : text);
      l.ctx.addUser(record.userMessage, 'observation');
    });
  }
  return all.map((l) => toTrajectory(l, spec));
}

function toTrajectory(l: Live, spec: RolloutSpec): Trajectory {
  const built = l.ctx.build();
  const logprobs = new Array<number>(built.ids.length).fill(0);
  for (const { start, logprobs: lps } of l.sampled)
    lps.forEach((lp, i) => {
      logprobs[start + i] = lp;
    });
  const entropy = l.sampled.every((s) => s.entropies) ? new Array<number>(built.ids.length).fill(0) : undefined;
  if (entropy)
    for (const { start, entropies } of l.sampled)
      entropies!.forEach((h, i) => {
        entropy[start + i] = h;
      });
  const turns = l.episode.turns.map((t, k): RolloutTurn => ({
    observation: t.observation,
    response: t.response,
    parsedActions: t.parsed.actions,
    executedActions: t.executedActions,
    actionsProposed: t.parsed.actions.length + t.parsed.unknown.length,
    actionsEffective: t.actionsEffective,
    envReward: t.envReward,
    formatPenalty: signedPenalty(t.penaltyCharged),
    rewardPosition: built.turnEnds[k],
    promptTokens: l.sampled[k].start,
    responseTokens: countMasked(built.mask, k === 0 ? -1 : built.turnEnds[k - 1], built.turnEnds[k]),
    ...(l.sampled[k].toolCalls ? { toolCalls: l.sampled[k].toolCalls } : {}),
    finishReason: l.sampled[k].finishReason,
  }));
  return {
    group: l.group,
    index: l.index,
    env: spec.env.type,
    seed: l.seed,
    ids: built.ids,
    mask: built.mask,
    roles: built.roles,
    logprobs,
    ...(entropy ? { entropy } : {}),
    turns,
    promptTokens: built.ids.length - built.mask.reduce((a, b) => a + b, 0),
    return: loggedReturn(turns),
    success: l.episode.success,
    truncated: l.truncated,
  };
}

function countMasked(mask: readonly number[], after: number, upTo: number): number {
  let n = 0;
  for (let i = after + 1; i <= upTo; i++) n += mask[i];
  return n;
}
