/**
 * DAPO dynamic sampling's rounds, one loop for both drivers: the embedded sampleGroups and the trainingRun
 * workflow (whose bundle imports this module too, hence no imports). Round 0 plays groups 0 … envGroups − 1;
 * then, while the plan (dynamic-sampling.ts) asks for more, each round plays the next `groupsNeeded` group
 * numbers: new numbers, hence new level seeds.
 */

/** What the loop reads of a sampling plan. */
export interface SamplingDecision {
  readonly action: string;
  readonly groupsNeeded: number;
}

/** Plays the rounds; returns the last plan (null without dynamic sampling, which plays round 0 only). */
export async function sampleRounds<P extends SamplingDecision>(
  s: { envGroups: number; dynamicSampling?: boolean },
  play: (groups: number[], round: number) => Promise<void>,
  plan: (tries: number) => Promise<P> | P,
): Promise<P | null> {
  const groups = (from: number, n: number) => Array.from({ length: n }, (_, k) => from + k);
  await play(groups(0, s.envGroups), 0);
  if (!s.dynamicSampling) return null;
  let next = s.envGroups;
  for (let tries = 1; ; tries++) {
    const p = await plan(tries);
    if (p.action !== 'sample-more') return p;
    await play(groups(next, p.groupsNeeded), tries);
    next += p.groupsNeeded;
  }
}
