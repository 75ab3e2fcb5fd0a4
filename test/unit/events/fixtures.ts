/** Hand-written events of every kind, shared by the event tests (and the Kafka integration test). */
import { encodeEvent } from '../../../src/events/codec.ts';
import type {
  CheckpointEvent,
  EchoTrapWarning,
  IterationEvent,
  RunEvent,
  StarpoEvent,
  TrajectoryEvent,
  Turn,
} from '../../../src/events/types.ts';

const T0 = new Date('2025-01-02T03:04:05.678Z');

export function turn(i: number): Turn {
  return {
    observation: `Turn ${i}:\nState:\n######\n#_P_O#\n#_X__#\n######`,
    response: `<think>push the box right</think><answer>Right || Down</answer>`,
    executedActions: ['Right', 'Down'],
    envReward: -0.1,
    formatPenalty: 0,
    actionsValid: 2,
    actionsEffective: 1,
    promptTokens: 120 + i,
    responseTokens: 14,
    toolCalls: i === 0 ? [{ name: 'python', input: 'print(1+1)', output: '2', ok: true, executed: true }] : [],
  };
}

export function runEvent(
  lineageId: string,
  parent: string | null = null,
  fromIteration = 0,
  runId = 'run-1',
): RunEvent {
  return {
    kind: 'run',
    runId,
    lineageId,
    action: parent === null ? 'STARTED' : 'RESUMED',
    parentLineageId: parent,
    fromIteration,
    reason: null,
    forks: 0,
    configJson: '{"env":"sokoban","groups":8}',
    at: T0,
  };
}

export function trajectory(
  lineageId: string,
  iteration: number,
  group = 0,
  rolloutIndex = 0,
  runId = 'run-1',
): TrajectoryEvent {
  return {
    kind: 'trajectory',
    runId,
    lineageId,
    iteration,
    group,
    rolloutIndex,
    envName: 'sokoban',
    envSeed: 2 ** 40 + group,
    policyVersion: iteration - 1,
    turns: [0, 1, 2].map(turn),
    trajectoryReturn: -0.3,
    success: false,
    startedAt: T0,
    finishedAt: new Date(T0.getTime() + 1500),
    extras: { note: 'x' },
    split: 'train',
    tokenIds: [5, 9, 2],
    tokenRoles: '034',
  };
}

export function iterationEvent(lineageId: string, iteration: number, runId = 'run-1'): IterationEvent {
  return {
    kind: 'iteration',
    runId,
    lineageId,
    iteration,
    successRateTrain: 0.25,
    successRateVal: null,
    returnMean: 1.5,
    returnStd: 0.5,
    inGroupReturnStd: 0.25,
    entropy: 1.25,
    gradNorm: 0.75,
    metrics: { 'actor/clip_frac': 0.125 },
    stageTimingsMs: { rollout: 1200, update: 800 },
    envSpecId: 'sokoban-a8f82da8',
    startedAt: T0,
    finishedAt: new Date(T0.getTime() + 2000),
    collapse: {
      rows: 2,
      columns: 2,
      meanLogProb: [-0.5, -1.5, -2, -0.25],
      sumLogProb: [-1, -3, -6, -0.75],
      columnOfRow: [0, 1],
      columnSignature: [0, 1],
      firstTurnTotal: 3,
      firstTurnValid: 2,
    },
  };
}

export function checkpointEvent(lineageId: string, iteration: number, runId = 'run-1'): CheckpointEvent {
  const uri = `s3://ckpt/runs/${runId}/checkpoints/${lineageId}/${iteration}/`;
  return {
    kind: 'checkpoint',
    runId,
    lineageId,
    iteration,
    uri,
    manifestUri: `${uri}manifest.json`,
    files: [{ name: 'model.safetensors', uri: `${uri}model.safetensors`, sha256: 'ab'.repeat(32), sizeBytes: 2 ** 33 }],
    totalBytes: 2 ** 33,
    createdAt: T0,
  };
}

export function echoTrap(lineageId: string, iteration: number, runId = 'run-1'): EchoTrapWarning {
  return {
    kind: 'echo-trap',
    runId,
    lineageId,
    iteration,
    evidence: { inGroupStdDrop: 0.8, gradNormSpike: 4.5 },
    message: 'in-group reward std fell 80% while grad norm rose 4.5x',
    detectedAt: T0,
  };
}

/** One of each kind, in a plausible order. */
export function oneOfEach(lineageId = 'L0'): StarpoEvent[] {
  return [
    runEvent(lineageId),
    trajectory(lineageId, 1),
    iterationEvent(lineageId, 1),
    checkpointEvent(lineageId, 1),
    echoTrap(lineageId, 1),
  ];
}

/** Zig-zag varint of 2^31 − 1. */
const HUGE_COUNT = Buffer.from([0xfe, 0xff, 0xff, 0xff, 0x0f]);

/** A trajectory record whose `turns` array claims 2^31 − 1 items (the count sits where an empty array's 0 is). */
export function hugeTurnsRecord(): Buffer {
  const empty = encodeEvent({ ...trajectory('L0', 1), turns: [] });
  const one = encodeEvent({ ...trajectory('L0', 1), turns: [trajectory('L0', 1).turns[0]!] });
  let at = 0;
  while (empty[at] === one[at]) at++;
  return Buffer.concat([empty.subarray(0, at), HUGE_COUNT, empty.subarray(at + 1)]);
}
