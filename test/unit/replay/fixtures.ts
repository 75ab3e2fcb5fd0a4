/**
 * Hand-written bandit trajectory events (compact template) whose outcomes match the real environment:
 * seed 4 pays the Dragon 1, seed 1 pays it 0; Phoenix always pays 0.1; "x" is not an action.
 */
import { canonicalConfigJSON, resolveConfig } from '../../../src/rl/config.ts';
import {
  createLocalEventLog,
  type IterationEvent,
  type RunEvent,
  type TrajectoryEvent,
} from '../../../src/events/index.ts';

const T0 = new Date('2025-01-02T03:04:05.678Z');
const ARMS: Record<number, string> = { 1: 'Arms: Phoenix, Dragon', 4: 'Arms: Phoenix, Dragon' };

export const config = resolveConfig({
  preset: 'grpo',
  overrides: ['env=bandit', 'envGroups=2', 'groupSize=2', 'miniBatchSize=4'],
});

function outcome(seed: number, response: string): { actions: string[]; envReward: number; formatPenalty: number } {
  if (response === 'P') return { actions: ['Phoenix'], envReward: 0.1, formatPenalty: 0 };
  if (response === 'D') return { actions: ['Dragon'], envReward: seed === 4 ? 1 : 0, formatPenalty: 0 };
  return { actions: [], envReward: 0, formatPenalty: -0.1 };
}

export interface TrajectorySpec {
  seed: number;
  group: number;
  rollout: number;
  response: string;
  iteration?: number;
  split?: 'train' | 'val';
}

export function trajectory(s: TrajectorySpec): TrajectoryEvent {
  const o = outcome(s.seed, s.response);
  return {
    kind: 'trajectory',
    runId: 'r',
    lineageId: 'main',
    iteration: s.iteration ?? 1,
    group: s.group,
    rolloutIndex: s.rollout,
    envName: 'bandit',
    envSeed: s.seed,
    policyVersion: 0,
    trajectoryReturn: o.envReward + o.formatPenalty,
    success: s.response === 'D',
    startedAt: T0,
    finishedAt: T0,
    extras: {},
    split: s.split ?? 'train',
    tokenIds: [],
    tokenRoles: '',
    turns: [
      {
        observation: ARMS[s.seed],
        response: s.response,
        executedActions: o.actions,
        envReward: o.envReward,
        formatPenalty: o.formatPenalty,
        actionsValid: o.actions.length,
        actionsEffective: o.actions.length,
        promptTokens: 24,
        responseTokens: s.response.length + 1,
        toolCalls: [],
      },
    ],
  };
}

/** Iteration 1: group 0 (seed 4) plays D and P, group 1 (seed 1) plays P and x. */
export const ITERATION_1 = [
  trajectory({ seed: 4, group: 0, rollout: 0, response: 'D' }),
  trajectory({ seed: 4, group: 0, rollout: 1, response: 'P' }),
  trajectory({ seed: 1, group: 1, rollout: 0, response: 'P' }),
  trajectory({ seed: 1, group: 1, rollout: 1, response: 'x' }),
];

export function iterationEvent(metrics: Record<string, number>): IterationEvent {
  return {
    kind: 'iteration',
    runId: 'r',
    lineageId: 'main',
    iteration: 1,
    successRateTrain: metrics.success_rate ?? 0,
    successRateVal: null,
    returnMean: metrics['return/mean'] ?? 0,
    returnStd: metrics['return/std'] ?? 0,
    inGroupReturnStd: metrics['in_group_std/all'] ?? 0,
    entropy: 0,
    gradNorm: metrics['actor/grad_norm'] ?? 0,
    metrics,
    stageTimingsMs: {},
    envSpecId: '',
    collapse: null,
    startedAt: T0,
    finishedAt: T0,
  };
}

/** Recorded metrics of ITERATION_1, by hand: returns [1, 0.1, 0.1, -0.1]; group stds 0.9/√2 and 0.2/√2. */
export const RECORDED = {
  success_rate: 0.25,
  'return/mean': 0.275,
  'return/std': 0.49244289008980524,
  'in_group_std/all': 0.38890872965260115,
  'pass@1': 0.25,
  'pass@2': 0.5,
  'response_length/mean': 2,
  'actions/valid_ratio': 0.75,
  format_penalty_rate: 0.25,
  'filter/kept_groups': 2,
  'actor/grad_norm': 1.5,
};

export const runEvent: RunEvent = {
  kind: 'run',
  runId: 'r',
  lineageId: 'main',
  action: 'STARTED',
  parentLineageId: null,
  fromIteration: 0,
  reason: null,
  forks: 0,
  configJson: canonicalConfigJSON(config),
  at: T0,
};

/** Writes run "r" (RunEvent, ITERATION_1, its IterationEvent) under `root`. */
export async function writeRun(root: string, metrics: Record<string, number> = RECORDED): Promise<void> {
  const log = createLocalEventLog({ root });
  await log.append([runEvent, ...ITERATION_1, iterationEvent(metrics)]);
  await log.close();
}
