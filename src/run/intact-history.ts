/**
 * Resuming a run whose local log is damaged. Where a resumed run continues is decided from the log's
 * RunEvents (src/run/resume-plan.ts), so past the damage nothing can be decided: a lineage started there is
 * unknown, and so is which checkpoint belongs to which chain. What the intact prefix does record is enough to
 * start a new lineage from a checkpoint whose iteration it holds (its IterationEvent, or the warm-start's
 * checkpoint 0): that is what `starpo resume <run> --from-iteration k --allow-partial` does, and what the
 * error a plain resume fails with lists.
 */
import { ConfigError, CorruptDataError } from '../errors.ts';
import type { EventReader, ReadProblem } from '../events/index.ts';
import { survivingCheckpoints, survivingPlan, type LineageStart } from '../events/lineage.ts';
import { describeDamage, isDamage } from '../events/problems.ts';
import type { CheckpointInfo } from '../storage/index.ts';

export interface IntactHistory {
  /** The lineage starts the intact prefix holds, in log order. */
  starts: LineageStart[];
  /** `<lineage>@<iteration>` of every IterationEvent in the intact prefix. */
  recorded: Set<string>;
  /** The damage the read stopped at; undefined when the log is whole. */
  damage: ReadProblem | undefined;
}

/** One read of the run's log up to its damage, if any (notes and warnings do not stop it). */
export async function readIntactHistory(reader: EventReader, runId: string): Promise<IntactHistory> {
  const history: IntactHistory = { starts: [], recorded: new Set(), damage: undefined };
  const onProblem = (p: ReadProblem) => {
    if (isDamage(p)) history.damage = p;
  };
  for await (const e of reader.read(runId, { onProblem, allowPartial: true })) {
    if (e.kind === 'iteration') history.recorded.add(`${e.lineageId}@${e.iteration}`);
    if (e.kind !== 'run') continue;
    const { lineageId, parentLineageId, fromIteration, forks } = e;
    history.starts.push({ lineageId, parentLineageId, fromIteration, forks });
  }
  return history;
}

/** The checkpoints a damaged log can still start a lineage from, oldest first (see the module comment). */
export function resumableFrom(history: IntactHistory, checkpoints: readonly CheckpointInfo[]): CheckpointInfo[] {
  if (history.starts.length === 0) return [];
  const surviving = survivingCheckpoints(survivingPlan(history.starts), checkpoints);
  return surviving.filter((c) => c.iteration === 0 || history.recorded.has(`${c.lineageId}@${c.iteration}`));
}

export interface DamagedResume {
  /** The run directory, as the command to run names it. */
  dir: string;
  runId: string;
  /** The iteration `starpo resume --from-iteration` asked for; undefined for `train --resume`. */
  fromIteration: number | undefined;
  allowPartial: boolean;
}

/**
 * Whether a resume may go on over a damaged log: only `starpo resume --allow-partial` from an iteration the
 * intact prefix records. Otherwise one line naming the damage, the iterations still resumable and the command.
 */
export function checkDamagedResume(
  r: DamagedResume,
  history: IntactHistory,
  checkpoints: readonly CheckpointInfo[],
): void {
  const damage = history.damage;
  if (damage === undefined) return;
  const usable = resumableFrom(history, checkpoints);
  const iterations = [...new Set(usable.map((c) => c.iteration))];
  const list = iterations.join(', ');
  if (r.allowPartial && r.fromIteration !== undefined) {
    if (iterations.includes(r.fromIteration)) return;
    throw new ConfigError(
      '--from-iteration',
      `${r.fromIteration} is past what the damaged log still records; ` +
        (iterations.length > 0 ? `resumable iterations: ${list}` : 'no iteration of it is resumable'),
    );
  }
  const k = iterations.at(-1);
  const how =
    k === undefined
      ? 'no checkpoint of an iteration the log before it records survives, so the run cannot be resumed'
      : `the log before it records iterations it can still resume from: ${list}; ` +
        `continue with \`starpo resume ${r.dir} --from-iteration ${k} --allow-partial\` ` +
        '(a new lineage; replay --allow-partial still stops at the damage)';
  throw new CorruptDataError(`${describeDamage(damage)}; ${how}`, { details: { ...damage, resumable: iterations } });
}
