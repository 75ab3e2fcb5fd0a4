/**
 * Supervised warm-start: demonstration episodes (solver-optimal, or random legal actions that teach
 * only the format) rendered in the run's template, trained with masked cross-entropy on exactly the
 * tokens the agent would have written — the same engine and loss mask as RL.
 */
import { expertEpisode, TEMPLATES, tokenizeMessages, type TemplateName } from '../agent/index.ts';
import { resolveEnvConfig } from '../envs/index.ts';
import type { Policy } from '../policy/engine/policy.ts';
import type { Tokenizer } from '../policy/tokenizer/types.ts';
import type { RlConfig } from './config.ts';
import { withBudget } from './rollout.ts';
import { padSequences } from './assemble.ts';
import { log } from '../log.ts';

/** Demonstration seeds: their own range, disjoint from training (near 0) and validation (2e9). */
export const DEMO_SEED_BASE = 1_000_000_000;

export function demonstrations(c: RlConfig, tokenizer: Tokenizer): { ids: number[]; mask: number[] }[] {
  const env = withBudget(resolveEnvConfig(c.env), {
    maxTurns: c.maxTurns, maxActionsPerTurn: c.maxActionsPerTurn, maxActionsPerTrajectory: c.maxActionsPerTrajectory,
  });
  const template = c.template as TemplateName;
  const out = [];
  for (let i = 0; i < c.sftEpisodes; i++) {
    const record = expertEpisode(env, DEMO_SEED_BASE + i, template, c.sftPolicy);
    if (c.sftPolicy === 'expert' && !record.success) continue; // a failed demonstration teaches failing
    const { ids, mask } = tokenizeMessages(record.messages, tokenizer, TEMPLATES[template].chat, true);
    if (ids.length <= c.modelContext) out.push({ ids, mask });
  }
  return out;
}

/** Runs sftSteps cross-entropy steps over the demonstrations (in order, cycling); returns summary metrics. */
export async function sftWarmup(c: RlConfig, actor: Policy, tokenizer: Tokenizer): Promise<Record<string, number>> {
  if (c.sftSteps === 0) return {};
  const demos = demonstrations(c, tokenizer);
  if (demos.length === 0) return { 'sft/episodes': 0 };
  const losses: number[] = [];
  for (let step = 0; step < c.sftSteps; step++) {
    const rows = Array.from({ length: Math.min(c.sftBatchSize, demos.length) }, (_, i) => demos[(step * c.sftBatchSize + i) % demos.length]);
    const m = await actor.trainStep(padSequences(rows), { loss: { kind: 'sft', aggregation: 'token-mean' }, lr: c.sftLr });
    losses.push(m.loss);
    if ((step + 1) % 50 === 0 || step === c.sftSteps - 1) log.info({ step: step + 1, of: c.sftSteps, loss: m.loss }, 'sft warm-start');
  }
  return { 'sft/episodes': demos.length, 'sft/first_loss': losses[0], 'sft/last_loss': losses[losses.length - 1] };
}
