/**
 * Supervised warm-start: demonstration episodes (solver-optimal, or random legal actions that teach
 * only the format) rendered in the run's template, trained with masked cross-entropy on exactly the
 * tokens the agent would have written — the same engine and loss mask as RL.
 */
import { expertEpisode, tokenizeMessages, type ExpertRecord, type TemplateName } from '../agent/index.ts';
import type { Trainer } from '../policy/engine/handle.ts';
import type { RlConfig } from './config.ts';
import { runEnvConfig } from './run-env.ts';
import { padSequences } from './assemble.ts';
import { log } from '../log.ts';
import { ConfigError } from '../errors.ts';
import { toolExpertEpisode } from '../tools/expert.ts';
import { toolFormat } from '../tools/formats.ts';
import type { CodeRunner } from '../tools/sandbox/pool.ts';
import type { RunText } from './run-model.ts';
import { toolFormatOf } from './tool-use.ts';

/** Demonstration seeds: their own range, disjoint from training (near 0) and validation (2e9). */
export const DEMO_SEED_BASE = 1_000_000_000;

/** One warm-start episode: its chat record, and its ids with the loss mask it trains under. */
export interface Demonstration {
  record: ExpertRecord;
  ids: number[];
  mask: number[];
}

/**
 * The warm-start's episodes. A tool run's expert makes its calls for real (`code`: the run's sandbox)
 * and the results are masked out, as in its rollouts.
 */
export async function demonstrations(c: RlConfig, text: RunText, code?: CodeRunner): Promise<Demonstration[]> {
  const env = runEnvConfig(c);
  const template = c.template as TemplateName;
  const format = toolFormatOf(c);
  if (format && c.sftPolicy !== 'expert')
    throw new ConfigError('sftPolicy', 'tool demonstrations come from the expert only');
  const out = [];
  let tooLong = 0;
  for (let i = 0; i < c.sftEpisodes; i++) {
    const seed = DEMO_SEED_BASE + i;
    const demo = format
      ? await toolExpertEpisode(env, seed, template, text.tokenizer, {
          format: toolFormat(format),
          code,
          maxCalls: c.toolMaxCalls,
          extraCalls: c.sftExtraToolCalls,
          chat: text.chat,
        })
      : plainDemonstration(expertEpisode(env, seed, template, c.sftPolicy), text);
    // An expert episode that failed by chance (a slip on the ice) still shows optimal actions; only one where
    // the solver saw no way to succeed from the start has nothing to teach.
    if (!demo.record.messages.some((m) => m.role === 'assistant')) continue;
    const fits =
      demo.ids.length <= c.modelContext && (demo.responseTokens ?? []).every((n) => n <= c.maxResponseTokens);
    if (fits) out.push({ record: demo.record, ids: demo.ids, mask: demo.mask });
    else tooLong++;
  }
  if (tooLong > 0) {
    log.warn(
      { tooLong, of: c.sftEpisodes, modelContext: c.modelContext, maxResponseTokens: c.maxResponseTokens },
      'demonstrations longer than the model context or a turn budget are left out',
    );
  }
  return out;
}

function plainDemonstration(record: ExpertRecord, text: RunText): Demonstration & { responseTokens?: number[] } {
  return { record, ...tokenizeMessages(record.messages, text.tokenizer, text.chat, true) };
}

/** Runs sftSteps cross-entropy steps over the demonstrations (in order, cycling); returns summary metrics. */
export async function sftWarmup(
  c: RlConfig,
  actor: Trainer,
  text: RunText,
  code?: CodeRunner,
): Promise<Record<string, number>> {
  if (c.sftSteps === 0) return {};
  const demos = await demonstrations(c, text, code);
  if (demos.length === 0) return { 'sft/episodes': 0 };
  const losses: number[] = [];
  for (let step = 0; step < c.sftSteps; step++) {
    const rows = Array.from(
      { length: Math.min(c.sftBatchSize, demos.length) },
      (_, i) => demos[(step * c.sftBatchSize + i) % demos.length],
    );
    const m = await actor.trainStep(padSequences(rows), {
      loss: { kind: 'sft', aggregation: 'token-mean' },
      lr: c.sftLr,
    });
    losses.push(m.loss);
    if ((step + 1) % 50 === 0 || step === c.sftSteps - 1)
      log.info({ step: step + 1, of: c.sftSteps, loss: m.loss }, 'sft warm-start');
  }
  return { 'sft/episodes': demos.length, 'sft/first_loss': losses[0], 'sft/last_loss': losses[losses.length - 1] };
}
