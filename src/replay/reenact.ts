/**
 * Plays a logged trajectory again: the environment is reset with the logged seed and fed the logged
 * responses through the same Episode the rollout used. Environments are pure functions of (seed, actions),
 * so this recovers what the event does not store — how many actions each answer proposed (the
 * denominator of the action ratios) and the exact chat messages the agent saw (for SFT data) — and
 * checks the log against the environment: any disagreement is reported as a divergence.
 */
import {
  Episode,
  TEMPLATES,
  signedPenalty,
  turnReward,
  type Message,
  type TemplateName,
  type TurnRecord,
} from '../agent/index.ts';
import { createEnv, type EnvConfig } from '../envs/index.ts';
import type { TrajectoryEvent, Turn } from '../events/index.ts';
import type { RlConfig } from '../rl/config.ts';
import { runEnvConfig } from '../rl/run-env.ts';

/** The rollout's episode settings, from the run config. */
export interface EpisodeSetup {
  env: EnvConfig;
  template: TemplateName;
  /** Reward added to a turn with a format error (≤ 0), as configured. */
  formatPenalty: number;
  /** A tool reward replaced the environment's rewards in the log (toolReward ≠ env): only actions are compared. */
  rewardsReplaced: boolean;
  /** The run's agent was an external program (config `agent`): no environment to replay, the log is taken as is. */
  externalAgent?: boolean;
}

export function episodeSetup(c: RlConfig): EpisodeSetup {
  return {
    env: runEnvConfig(c),
    template: c.template as TemplateName,
    formatPenalty: c.formatPenalty,
    rewardsReplaced: c.toolReward !== 'env',
    externalAgent: c.agent !== '',
  };
}

/** An external agent's episode as logged: each call's new messages and the model's reply. */
function asLogged(e: TrajectoryEvent): Reenacted {
  return {
    proposed: e.turns.map((t) => t.actionsValid),
    divergence: null,
    messages: e.turns.flatMap((t): Message[] => [
      { role: 'user', content: t.observation },
      { role: 'assistant', content: t.response },
    ]),
    turns: e.turns.map((t) => ({ actions: t.executedActions, reward: turnReward(t) })),
  };
}

export interface Reenacted {
  /** Actions each turn's answer proposed (parsed + unknown pieces), as the rollout counted them. */
  proposed: number[];
  /** System/user/assistant messages exactly as the episode rendered them. */
  messages: Message[];
  /** Per turn: executed actions and the reward the agent was told (env reward + format penalty). */
  turns: Array<{ actions: string[]; reward: number }>;
  /** The first disagreement between the log and the replayed episode, or null. */
  divergence: string | null;
}

function compareTurn(k: number, logged: Turn, played: TurnRecord | null, compareRewards: boolean): string | null {
  if (played === null) return `turn ${k}: the log has a turn after the episode ended`;
  const [mine, theirs] = [played.executedActions, logged.executedActions];
  if (mine.length !== theirs.length || mine.some((a, i) => a !== theirs[i])) {
    return `turn ${k}: executed ${JSON.stringify(mine)}, log says ${JSON.stringify(theirs)}`;
  }
  if (!compareRewards) return null;
  if (logged.envReward !== played.envReward) {
    return `turn ${k}: env reward ${played.envReward}, log says ${logged.envReward}`;
  }
  // The episode charges a positive penalty; the rollout logs it as a negative reward.
  if (logged.formatPenalty !== signedPenalty(played.penaltyCharged)) {
    return `turn ${k}: format penalty ${signedPenalty(played.penaltyCharged)}, log says ${logged.formatPenalty}`;
  }
  return null;
}

export function reenact(e: TrajectoryEvent, setup: EpisodeSetup): Reenacted {
  if (setup.externalAgent) return asLogged(e);
  const template = TEMPLATES[setup.template];
  const episode = new Episode(createEnv(setup.env), setup.env, template, { formatPenalty: setup.formatPenalty });
  episode.start(e.envSeed);
  let divergence = e.envName === setup.env.type ? null : `env ${e.envName}, run config says ${setup.env.type}`;
  const proposed: number[] = [];
  e.turns.forEach((logged, k) => {
    const played = episode.done ? null : episode.respond(logged.response);
    divergence ??= compareTurn(k, logged, played, !setup.rewardsReplaced);
    proposed.push(played ? played.parsed.actions.length + played.parsed.unknown.length : logged.actionsValid);
  });
  if (divergence === null && episode.success !== e.success) {
    divergence = `success ${episode.success}, log says ${e.success}`;
  }
  return {
    proposed,
    messages: episode.messages.slice(),
    divergence,
    turns: episode.turns.map((t) => ({ actions: t.executedActions, reward: t.reward })),
  };
}
