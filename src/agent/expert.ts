import { mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { StarpoError } from '../errors.ts';
import { envDefinition, resolveEnvConfig, type EnvConfig, type EnvConfigInput } from '../envs/registry.ts';
import { Episode } from './episode.ts';
import { TEMPLATES, type PromptTemplate, type TemplateName } from './templates.ts';
import type { Message } from './types.ts';
import { Prng } from '../envs/prng.ts';

/**
 * Expert trajectories for supervised warm-start: each turn, the environment's expert (the solver,
 * or the value-iteration policy) picks the actions, the template writes them as a well-formed
 * response, and the episode is played for real — so a record is exactly what the agent would have
 * seen and written. Only successful episodes are kept unless asked otherwise.
 */
export interface ExpertRecord {
  env: EnvConfig;
  seed: number;
  template: TemplateName;
  messages: Message[];
  turns: Array<{ actions: string[]; reward: number }>;
  return: number;
  success: boolean;
}

export interface ExpertDatasetOptions {
  env: EnvConfigInput;
  seeds: readonly number[];
  template: TemplateName;
  /** Keep episodes the expert failed (FrozenLake's ice can defeat any policy). Default false. */
  includeFailures?: boolean;
}

/** Who writes a warm-start episode: the solver's optimal actions, or uniformly random legal ones (format only). */
export type DemoPolicy = 'expert' | 'random';

export function expertEpisode(
  config: EnvConfigInput,
  seed: number,
  templateName: TemplateName,
  policy: DemoPolicy = 'expert',
): ExpertRecord {
  const { env, template, episode } = startExpertEpisode(config, seed, templateName);
  const rng = new Prng(seed ^ 0x5eed);
  while (!episode.done) {
    const response = expertResponse(env, episode, template, policy, rng);
    if (response === null) break; // the expert sees no way to succeed from here
    episode.respond(response);
  }
  return expertRecord(env, seed, templateName, episode);
}

/** An episode of `seed` started for an expert to play; throws when the environment has no expert. */
export function startExpertEpisode(
  config: EnvConfigInput,
  seed: number,
  templateName: TemplateName,
): {
  env: EnvConfig;
  template: PromptTemplate;
  episode: Episode;
} {
  const env = resolveEnvConfig(config);
  if (!envDefinition(env).expert) throw new StarpoError(`${env.type}: no expert registered`);
  const template = TEMPLATES[templateName];
  const episode = new Episode(envDefinition(env).create(env), env, template);
  episode.start(seed);
  return { env, template, episode };
}

/** The response the expert (or a random legal policy) writes for the episode's next turn; null = no way to succeed. */
export function expertResponse(
  env: EnvConfig,
  episode: Episode,
  template: PromptTemplate,
  policy: DemoPolicy,
  rng: Prng,
): string | null {
  const task = episode.env.describe();
  const names = template.actionNames(task);
  const { turnsLeft, actionsLeft } = episode;
  const left = { turnsLeft, actionsLeft, maxActionsPerTurn: env.maxActionsPerTurn };
  const definition = envDefinition(env);
  const expert = definition.expert as NonNullable<typeof definition.expert>;
  const snapshot = episode.env.snapshot();
  const actions =
    policy === 'expert'
      ? expert(env, snapshot, left)
      : task.actions.length === 0 && definition.randomAction
        ? [definition.randomAction(env, snapshot, rng)]
        : randomActions(task.actions, left, rng);
  if (actions.length === 0) return null;
  return template.formatResponse(
    actions.map((a) => (task.actions.length ? (names[task.actions.indexOf(a)] as string) : a)),
  );
}

export function expertRecord(env: EnvConfig, seed: number, template: TemplateName, episode: Episode): ExpertRecord {
  return {
    env,
    seed,
    template,
    messages: episode.messages.slice(),
    turns: episode.turns.map((t) => ({ actions: t.executedActions, reward: t.reward })),
    return: episode.totalReward,
    success: episode.success,
  };
}

/**
 * 1..maxActionsPerTurn uniformly random actions (at least one when the vocabulary is non-empty): teaches
 * the response format without the answer, so RL still has to find the better action.
 */
function randomActions(
  actions: readonly string[],
  left: { actionsLeft: number; maxActionsPerTurn: number },
  rng: Prng,
): string[] {
  if (actions.length === 0) return [];
  const n = 1 + rng.int(Math.max(1, Math.min(left.maxActionsPerTurn, left.actionsLeft)));
  return Array.from({ length: n }, () => rng.pick(actions));
}

/** Writes one JSON line per kept episode (atomically: a temp file renamed into place). */
export async function writeExpertDataset(
  path: string,
  options: ExpertDatasetOptions,
): Promise<{ written: number; skipped: number }> {
  const records = options.seeds
    .map((seed) => expertEpisode(options.env, seed, options.template))
    .filter((record) => record.success || options.includeFailures);
  await writeRecords(path, records);
  return { written: records.length, skipped: options.seeds.length - records.length };
}

/** One JSON line per record, atomically (a temp file renamed into place). */
export async function writeRecords(path: string, records: readonly ExpertRecord[]): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temp = `${path}.tmp-${process.pid}`;
  await writeFile(temp, records.map((r) => `${JSON.stringify(r)}\n`).join(''));
  await rename(temp, path);
}
