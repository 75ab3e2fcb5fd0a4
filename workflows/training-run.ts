/**
 * trainingRun: one lineage of a training run, iteration by iteration, as activities (workflows/iteration.ts).
 * Deterministic orchestration only: no I/O, no clocks but workflow time, activities imported as types.
 * Signals pause (at the next iteration boundary), resume and stop (after the current iteration and its
 * checkpoint); the `progress` query reports where the run is. Continues as new every
 * `continueAsNewEvery` iterations, or sooner when the server suggests it, so histories stay small.
 * When the Echo-Trap detector fires under onCollapse=stop the run ends there; under fork it continues as
 * new as a new lineage from the fork point (src/rl/collapse-action.ts), which startRun logs as FORKED.
 */
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  patched,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import {
  PROGRESS_QUERY,
  SIGNALS,
  type Carry,
  type IterationSummary,
  type Progress,
  type RunOutcome,
  type Stage,
  type TrainingRunInput,
} from '../src/durable/protocol.ts';
import { type CheckpointRef } from '../src/run/checkpoint.ts';
import { forkLineageId } from '../src/events/lineage.ts';
import type { CollapseAction } from '../src/rl/collapse-action.ts';
import { stageActivities, type Stages } from './activities.ts';
import { runIteration, type IterationOutcome } from './iteration.ts';
import { RolloutSchedule } from './rollout-schedule.ts';
import { headlineMetrics } from '../src/rl/metric-names.ts';

export const pauseSignal = defineSignal(SIGNALS.pause);
export const resumeSignal = defineSignal(SIGNALS.resume);
export const stopSignal = defineSignal(SIGNALS.stop);
export const progressQuery = defineQuery<Progress>(PROGRESS_QUERY);
/** Patch marker: iteration i + 1's rollout starts when the update wrote checkpoint i; i is published beside i + 1. */
export const PIPELINED_ITERATIONS = 'pipelined-iterations';

const RECENT = 10;
const num = (v: number | string | undefined): number => (typeof v === 'number' ? v : Number(v ?? NaN));

function summary(iteration: number, o: IterationOutcome): IterationSummary {
  const h = headlineMetrics(o.metrics);
  return {
    iteration,
    success: num(h.success),
    valSuccess: h.valSuccess === undefined ? null : num(h.valSuccess),
    inGroupStd: num(h.inGroupStd),
    entropy: num(h.entropy),
    gradNorm: num(h.gradNorm),
    ms: o.ms,
    warning: o.warning,
  };
}

/** Handler state: what signals set and the query reads. */
class RunState {
  paused: boolean;
  stopping = false;
  /** Ended by onCollapse (stop, or a fork with nowhere to go). */
  collapsed = false;
  stage: Progress['stage'] = 'starting';
  iteration: number;
  iterations = 0;
  recent: IterationSummary[];

  constructor(private readonly input: TrainingRunInput) {
    this.paused = input.carry?.paused ?? false;
    this.recent = input.carry?.recent ?? [];
    this.iteration = (input.carry?.nextIteration ?? (input.resume?.fromIteration ?? 0) + 1) - 1;
  }

  completed(iteration: number, outcome: IterationOutcome): void {
    this.iteration = iteration;
    this.recent = [...this.recent, summary(iteration, outcome)].slice(-RECENT);
  }

  progress(): Progress {
    const { runId, lineageId } = this.input.run;
    return {
      runId,
      lineageId,
      iteration: this.iteration,
      iterations: this.iterations,
      stage: this.stage,
      paused: this.paused,
      stopping: this.stopping,
      recent: this.recent,
    };
  }
}

/** A fork continues as new from the fork point; returns only when none survives (the run then stops). */
type Fork = Extract<CollapseAction, { kind: 'fork' }>;

async function fork(stages: Stages, input: TrainingRunInput, action: Fork): Promise<void> {
  const point = await stages.update.forkPoint({ run: input.run, before: action.before });
  if (!point) return;
  await condition(allHandlersFinished);
  await continueAsNew<typeof trainingRun>({
    run: { ...input.run, lineageId: forkLineageId(action.forks, point.iteration), forks: action.forks },
    options: input.options,
    stopAfter: input.stopAfter,
    resume: {
      parentLineageId: point.lineageId,
      fromIteration: point.iteration,
      fork: { reason: action.reason, forks: action.forks },
    },
  });
}

export async function trainingRun(input: TrainingRunInput): Promise<RunOutcome> {
  const state = new RunState(input);
  setHandler(pauseSignal, () => void (state.paused = true));
  setHandler(resumeSignal, () => void (state.paused = false));
  setHandler(stopSignal, () => void (state.stopping = true));
  setHandler(progressQuery, () => state.progress());
  const stages = stageActivities(input.options);
  const carry: Omit<Carry, 'paused' | 'recent'> =
    input.carry ??
    (await stages.update.startRun({
      run: input.run,
      configJson: input.configJson,
      resume: input.resume,
    }));
  const lineage: TrainingRunInput = { ...input, run: { ...input.run, forks: carry.forks ?? 0 } };
  state.iterations = carry.plan.iterations;
  const last = Math.min(carry.plan.iterations, input.stopAfter ?? carry.plan.iterations);
  // Histories from before this marker ran each iteration to its end before the next began.
  const pipelined = patched(PIPELINED_ITERATIONS);
  const rollouts = new RolloutSchedule(stages, lineage, carry.plan, carry, last, pipelined);
  let policy: CheckpointRef = carry.policy;
  let publishing: Promise<void> = Promise.resolve();
  let ran = 0;
  for (let i = carry.nextIteration; i <= last; i++) {
    if (state.paused) {
      await publishing; // a paused run has published every iteration it trained
      state.stage = 'paused'; // held here, at the boundary, until resume or stop
    }
    await condition(() => !state.paused || state.stopping);
    if (state.stopping) break;
    const trained = await runIteration(
      stages,
      lineage,
      carry.plan,
      i,
      policy,
      (s: Stage) => void (state.stage = s),
      rollouts,
    );
    policy = trained.checkpoint;
    ran++;
    const before = publishing; // iteration i − 1's publication: at most one runs beside the training
    publishing = before.then(() => trained.publish(!pipelined)).then((outcome) => state.completed(i, outcome));
    publishing.catch(() => undefined); // awaited below or at the next iteration; it must not fail unobserved
    await (pipelined && !trained.collapse ? before : publishing);
    if (trained.collapse?.kind === 'fork') await fork(stages, lineage, trained.collapse);
    if (trained.collapse) {
      state.collapsed = true; // stopped by onCollapse, or a fork with no checkpoint left to go back to
      break;
    }
    const due = ran >= input.options.continueAsNewEvery || workflowInfo().continueAsNewSuggested;
    if (i < last && !state.stopping && due) {
      await publishing;
      const held = await rollouts.drain(i + 1); // rollouts already under way, finished and carried over
      await condition(allHandlersFinished);
      const next: Carry = {
        plan: carry.plan,
        policy,
        nextIteration: i + 1,
        paused: state.paused,
        recent: state.recent,
        forks: carry.forks,
        ...held,
      };
      await continueAsNew<typeof trainingRun>({ ...input, carry: next });
    }
  }
  await publishing;
  state.stage = state.collapsed || (state.stopping && state.iteration < last) ? 'stopped' : 'done';
  await condition(allHandlersFinished);
  const { runId, lineageId } = input.run;
  const stopped = state.stage === 'stopped';
  return { runId, lineageId, lastIteration: state.iteration, stopped, checkpoint: policy, recent: state.recent };
}
