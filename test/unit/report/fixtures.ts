/** Small hand-written runs for the report tests: literal events, exact expectations. */
import type { EchoTrapWarning, IterationEvent, RunEvent, TrajectoryEvent } from '../../../src/events/index.ts';

const AT = new Date('2025-06-01T00:00:00.000Z');
const ids = (runId: string) => ({ runId, lineageId: 'main' });

const SOKOBAN = { env: 'sokoban', iterations: 4, valSeeds: 0 };

export function run(runId = 'r', config: Record<string, unknown> = SOKOBAN): RunEvent {
  return {
    kind: 'run',
    ...ids(runId),
    action: 'STARTED',
    parentLineageId: null,
    fromIteration: 0,
    reason: null,
    forks: 0,
    configJson: JSON.stringify(config),
    at: AT,
  };
}

export function iteration(i: number, metrics: Record<string, number>, runId = 'r'): IterationEvent {
  return {
    kind: 'iteration',
    ...ids(runId),
    iteration: i,
    successRateTrain: metrics.success_rate ?? 0,
    successRateVal: null,
    returnMean: 0,
    returnStd: 0,
    inGroupReturnStd: 0,
    entropy: 0,
    gradNorm: 0,
    metrics,
    stageTimingsMs: { rollout: 100 * i, update: 50 },
    envSpecId: '',
    collapse: null,
    startedAt: AT,
    finishedAt: AT,
  };
}

export function trajectory(i: number, group: number, rollout: number, split = 'train', runId = 'r'): TrajectoryEvent {
  return {
    kind: 'trajectory',
    ...ids(runId),
    iteration: i,
    group,
    rolloutIndex: rollout,
    envName: 'sokoban',
    envSeed: 10 * i + group,
    policyVersion: i - 1,
    trajectoryReturn: 1,
    success: true,
    startedAt: AT,
    finishedAt: AT,
    extras: {},
    split,
    tokenIds: [],
    tokenRoles: '', // an event without a token log, as written before schema v4
    turns: [
      {
        observation: '#####\n#P_O#\n#####',
        response: '<answer>Right</answer>',
        executedActions: ['Right'],
        envReward: 1,
        formatPenalty: 0,
        actionsValid: 1,
        actionsEffective: 1,
        promptTokens: 10,
        responseTokens: 4,
        toolCalls: [{ name: 'python', input: 'print(2)', output: '2', ok: true, executed: true }],
      },
    ],
  };
}

export function warning(i: number, runId = 'r'): EchoTrapWarning {
  return {
    kind: 'echo-trap',
    ...ids(runId),
    iteration: i,
    evidence: { entropyDrop: 0.5 },
    message: 'entropy fell',
    detectedAt: AT,
  };
}
