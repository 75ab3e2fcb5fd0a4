/**
 * An SFT dataset from logged trajectories: one ExpertRecord per selected trajectory (the format of
 * src/agent/expert.ts, so the supervised warm-start reads it like solver demonstrations), with the chat
 * messages rebuilt by replaying the episode (reenact.ts) and the trajectory's event key as `source`.
 * A trajectory whose replay disagrees with the log is skipped: its messages would not be what the agent saw.
 */
import type { ExpertRecord } from '../agent/index.ts';
import { eventKey, type TrajectoryEvent } from '../events/index.ts';
import { ConfigError } from '../errors.ts';
import type { TrajectorySink } from './export.ts';
import { LineWriter } from './line-writer.ts';
import { reenact, type EpisodeSetup } from './reenact.ts';

export type Selection = 'successful' | 'positive-return' | 'all';

/** Which trajectories become training examples. */
export const SELECTIONS: Record<Selection, (e: TrajectoryEvent) => boolean> = {
  successful: (e) => e.success,
  'positive-return': (e) => e.trajectoryReturn > 0,
  all: () => true,
};

export function parseSelection(name: string): Selection {
  if (!(name in SELECTIONS)) {
    throw new ConfigError('--select', `"${name}": one of ${Object.keys(SELECTIONS).join(', ')}`);
  }
  return name as Selection;
}

export type SftRecord = ExpertRecord & { source: string };

/** The record of a trajectory, or the reason it cannot be one. */
export function sftRecord(e: TrajectoryEvent, setup: EpisodeSetup): SftRecord | { skipped: string } {
  const played = reenact(e, setup);
  if (played.divergence) return { skipped: played.divergence };
  return {
    env: setup.env,
    seed: e.envSeed,
    template: setup.template,
    messages: played.messages,
    turns: played.turns,
    return: played.turns.reduce((sum, t) => sum + t.reward, 0),
    success: e.success,
    source: eventKey(e),
  };
}

export interface SftSink extends TrajectorySink {
  /** Selected trajectories left out because their replay diverged. */
  readonly skipped: number;
}

export async function openSftDataset(path: string, selection: Selection): Promise<SftSink> {
  const out = await LineWriter.open(path);
  const select = SELECTIONS[selection];
  let [count, skipped] = [0, 0];
  return {
    path,
    get count() {
      return count;
    },
    get skipped() {
      return skipped;
    },
    write: async (e, setup) => {
      if (!select(e)) return;
      const record = sftRecord(e, setup);
      if ('skipped' in record) skipped++;
      else {
        count++;
        await out.write(JSON.stringify(record));
      }
    },
    close: () => out.close(),
    abort: () => out.abort(),
  };
}
