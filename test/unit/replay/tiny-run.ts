/** A real, tiny embedded run (bandit, 1-layer scratch model, threads=1) for the replay tests: a few seconds. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveConfig } from '../../../src/rl/config.ts';
import type { PresetName } from '../../../src/rl/presets.ts';
import { trainEmbedded } from '../../../src/embedded/driver.ts';

const TINY = [
  'env=bandit',
  'envGroups=4',
  'groupSize=4',
  'miniBatchSize=4',
  'iterations=3',
  'threads=1',
  'valSeeds=4',
  'valEvery=2',
  'valSamples=2',
  'modelLayers=1',
  'modelHidden=32',
  'modelFfn=64',
  'maxResponseTokens=4',
  'sftSteps=0',
];

/** Trains run "r" under a fresh directory and returns that directory (the runs root). */
export async function tinyRun(preset: PresetName, overrides: string[] = []): Promise<string> {
  const root = mkdtempSync(join(tmpdir(), 'starpo-replay-'));
  const config = resolveConfig({ preset, overrides: [...TINY, ...overrides] });
  await trainEmbedded({ root, runId: 'r', config });
  return root;
}
