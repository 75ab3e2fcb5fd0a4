/**
 * What `starpo train` says about a run before it starts, in three short lines: what trains (preset,
 * environment and its spec id, iterations), the model, and where the run is kept. The whole resolved
 * config is saved with the run, and printed only with --print-config.
 */
import { basename } from 'node:path';
import type { RlConfig } from '../rl/config.ts';
import { presetOf } from '../rl/presets.ts';
import { formatCount, memoryNeeds } from '../rl/capacity.ts';
import { runEnvSpecId } from '../rl/run-env.ts';
import type { RunModel } from '../rl/run-model.ts';

/**
 * "starpo-s on bandit (env spec bandit-1a2b3c4d): 30 iterations of 8 groups × 16": the algorithm named by the preset
 * the config is (presetOf), so a config file that spells GRPO out reads "grpo", and a resumed run says so. Success
 * figures compare only under equal spec ids.
 */
export function trainingLine(c: RlConfig, resumed: boolean): string {
  const algorithm =
    presetOf(c) ?? `custom (${c.advantage} advantages${c.critic ? ', critic' : ''}, filter ${c.filter})`;
  return (
    `${algorithm}${resumed ? ' (resumed)' : ''} on ${c.env} (env spec ${runEnvSpecId(c)}): ${c.iterations} ` +
    `iteration${c.iterations === 1 ? '' : 's'} of ${c.envGroups} groups × ${c.groupSize}`
  );
}

/** "model: 105.4k parameters from scratch (2 layers, hidden 64)", or the pretrained directory's name. */
export function modelLine(c: RlConfig, model: Pick<RunModel, 'modelConfig' | 'lora'>): string {
  const size = `${formatCount(memoryNeeds(c, model.modelConfig, model.lora).parameters)} parameters`;
  const lora = model.lora ? `, LoRA rank ${model.lora.rank}` : '';
  if (c.model) return `model: ${basename(c.model)}, ${size}${lora}`;
  const { numLayers: layers, hiddenSize } = model.modelConfig;
  return `model: ${size} from scratch (${layers} layer${layers === 1 ? '' : 's'}, hidden ${hiddenSize}${lora})`;
}

/** Where an embedded run is kept (its directory holds the run id), and how to see the rest. */
export function whereLine(dir: string, logFile: boolean): string {
  const log = logFile ? ', train.log' : '';
  return `saved in ${dir}/ (config, events, checkpoints${log}); full config: --print-config`;
}
