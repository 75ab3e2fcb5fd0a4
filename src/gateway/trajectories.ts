/**
 * An episode's calls → trajectories of the rollout's shape (src/rl/rollout.ts Trajectory), so agent episodes go
 * through the same score, filter, advantage and update stages as the built-in environments.
 * - prefix (default): a call whose prompt continues an earlier call's prompt and sampled tokens extends that
 *   call's trajectory (multi-call merging); any other call starts a trajectory of its own. A call continued
 *   twice (two branches from one reply) continues it once; the second branch starts a new trajectory in which
 *   the shared history is context only.
 * - transition: every call is a trajectory of its own (Agent Lightning's transition mode).
 * Loss mask 1 exactly on the tokens the trajectory's own calls sampled; everything else is context (system,
 * user, tool results, template, and assistant text this trajectory does not train, relabelled as the client's).
 * Each call is a turn whose reward is the call's own reward, plus the episode's reward on each trajectory's
 * last turn (every trajectory of an episode carries the episode's outcome).
 */
import { roleCode } from '../agent/chat-format.ts';
import { trajectoryReturn } from '../agent/reward.ts';
import { StarpoError } from '../errors.ts';
import type { RolloutTurn, Trajectory } from '../rl/rollout.ts';
import type { CallRecord } from './episodes.ts';

export type MergeMode = 'prefix' | 'transition';

/** The episode's outcome, as reported. */
export interface Outcome {
  readonly reward: number | null;
  readonly success: boolean | null;
}

/** What a trajectory of an episode holds before the rollout numbers it. */
export type EpisodeTrajectory = Omit<Trajectory, 'group' | 'index' | 'env' | 'seed'>;

const ASSISTANT = roleCode('assistant');
const USER = roleCode('user');

/** The calls, in order, grouped into the trajectories they form. */
export function chainsOf(calls: readonly CallRecord[], mode: MergeMode): CallRecord[][] {
  const chains: CallRecord[][] = [];
  const open = new Map<number, CallRecord[]>(); // last call's ordinal → its chain, while no call has continued it
  for (const call of [...calls].sort((a, b) => a.ordinal - b.ordinal)) {
    const chain = mode === 'prefix' && call.parent !== null ? open.get(call.parent) : undefined;
    if (chain) open.delete(call.parent!);
    const into = chain ?? [];
    if (!chain) chains.push(into);
    into.push(call);
    open.set(call.ordinal, into);
  }
  return chains;
}

function turnOf(call: CallRecord, start: number, reward: number): RolloutTurn {
  return {
    observation: call.observation,
    response: call.response,
    parsedActions: [...call.toolNames],
    executedActions: [...call.toolNames],
    actionsProposed: call.toolNames.length,
    actionsEffective: call.toolNames.length,
    envReward: reward,
    formatPenalty: 0,
    rewardPosition: start + call.sampled.length - 1,
    promptTokens: start,
    responseTokens: call.sampled.length,
  };
}

function chainTrajectory(chain: readonly CallRecord[], outcome: Outcome, truncated: boolean): EpisodeTrajectory {
  const last = chain[chain.length - 1];
  const ids = [...last.promptIds, ...last.sampled];
  const roles = [...last.promptRoles, ...last.sampled.map(() => ASSISTANT)];
  const mask = new Array<number>(ids.length).fill(0);
  const logprobs = new Array<number>(ids.length).fill(0);
  const turns = chain.map((call, k) => {
    const start = call.promptIds.length;
    if (call.sampled.some((id, i) => ids[start + i] !== id) || call.promptIds.some((id, i) => ids[i] !== id)) {
      throw new StarpoError(`gateway: call ${call.id} is not a prefix of the trajectory it extends`);
    }
    mask.fill(1, start, start + call.sampled.length);
    call.logprobs.forEach((lp, i) => {
      logprobs[start + i] = lp;
    });
    const reward = (call.reward ?? 0) + (k === chain.length - 1 ? (outcome.reward ?? 0) : 0);
    return turnOf(call, start, reward);
  });
  roles.forEach((r, i) => {
    if (r === ASSISTANT && mask[i] === 0) roles[i] = USER;
  });
  const trained = mask.reduce((a, b) => a + b, 0);
  const ret = trajectoryReturn(turns); // the outcome is on the last turn's reward (agent/reward.ts)
  return {
    ids,
    mask,
    roles,
    logprobs,
    turns,
    promptTokens: ids.length - trained,
    return: ret,
    success: outcome.success ?? (outcome.reward ?? 0) > 0,
    truncated,
  };
}

export function episodeTrajectories(
  calls: readonly CallRecord[],
  mode: MergeMode,
  outcome: Outcome,
  truncated = false,
): EpisodeTrajectory[] {
  return chainsOf(calls, mode).map((chain) => chainTrajectory(chain, outcome, truncated));
}
