/**
 * Tool-use demonstrations of whole episodes for a supervised warm-start: each turn the environment's
 * expert makes its calls (`expertCalls`: the problem's solution code, the library's ground-truth
 * functions), the calls really run — in the sandbox, or against the episode's own environment — and
 * the answer follows. The ids and loss mask are built by the same ContextBuilder the rollout uses, with
 * the tool results masked out exactly as a tool turn masks them.
 */
import type { ChatFormat } from '../agent/chat-format.ts';
import { ContextBuilder, type TokenizedContext } from '../agent/context.ts';
import { expertRecord, expertResponse, startExpertEpisode, type ExpertRecord } from '../agent/expert.ts';
import type { TemplateName } from '../agent/templates.ts';
import type { TextTokenizer } from '../agent/types.ts';
import { StarpoError } from '../errors.ts';
import { Prng } from '../envs/prng.ts';
import { envDefinition, type EnvConfigInput } from '../envs/registry.ts';
import type { ExpertCall } from '../envs/types.ts';
import { encodeSegments, toolDemonstration, type DemonstrationStep } from './demonstration.ts';
import { executorForEnv } from './executors.ts';
import type { ToolFormat } from './formats.ts';
import type { CodeRunner } from './sandbox/pool.ts';

export interface ToolExpertOptions {
  format: ToolFormat;
  /** The code interpreter (code formats). */
  code?: CodeRunner;
  /** C: calls per response; the expert never writes more. */
  maxCalls: number;
  /** Each turn repeats one of its calls 0..extraCalls more times (uniformly), as an over-calling model would. */
  extraCalls?: number;
  /** How messages are wrapped (the run's model's chat template); default the prompt template's own. */
  chat?: ChatFormat;
}

export interface ToolExpertEpisode extends TokenizedContext {
  /** The episode as chat messages (assistant content with the calls and their shown results). */
  record: ExpertRecord;
  /** Tokens of each assistant turn, tool results and the stop included (what a rollout's turn budget counts). */
  responseTokens: number[];
}

/** The expert's calls with `extra` repeats, each inserted right after the call it repeats. */
export function withRepeats(calls: readonly ExpertCall[], extra: number, rng: Prng): ExpertCall[] {
  const out = [...calls];
  if (out.length === 0) return out;
  for (let k = rng.int(extra + 1); k > 0; k--) {
    const i = rng.int(out.length);
    out.splice(i + 1, 0, out[i] as ExpertCall);
  }
  return out;
}

export async function toolExpertEpisode(
  config: EnvConfigInput,
  seed: number,
  templateName: TemplateName,
  tokenizer: TextTokenizer,
  o: ToolExpertOptions,
): Promise<ToolExpertEpisode> {
  const { env, template, episode } = startExpertEpisode(config, seed, templateName);
  const expertCalls = envDefinition(env).expertCalls;
  if (!expertCalls) throw new StarpoError(`${env.type}: no tool expert registered (expertCalls)`);
  const chat = o.chat ?? template.chat;
  const ctx = new ContextBuilder(tokenizer, chat);
  for (const message of episode.messages) ctx.addMessage(message);
  const executor = executorForEnv(episode.env, o.code);
  const rng = new Prng(seed, 0x7001);
  const written: string[] = [];
  const responseTokens: number[] = [];
  while (!episode.done) {
    const calls = withRepeats(expertCalls(env, episode.env.snapshot()), o.extraCalls ?? 0, rng).slice(0, o.maxCalls);
    const steps: DemonstrationStep[] = [];
    for (const call of calls) steps.push({ call, result: await executor.execute(call) });
    const answer = expertResponse(env, episode, template, 'expert', rng);
    if (answer === null) break;
    const segments = [...toolDemonstration(o.format, steps, answer), { text: chat.stop, trained: true }];
    const { ids, mask } = encodeSegments(segments, tokenizer);
    ctx.beginResponse();
    ctx.addResponse(ids, true, mask);
    responseTokens.push(ids.length);
    written.push(
      segments
        .slice(0, -1)
        .map((s) => s.text)
        .join(''),
    );
    ctx.addUser(episode.respond(answer).userMessage, 'observation');
  }
  const record = expertRecord(env, seed, templateName, episode);
  let turn = 0;
  record.messages = record.messages.map((m) =>
    m.role === 'assistant' ? { ...m, content: written[turn++] as string } : m,
  );
  return { ...ctx.build(), record, responseTokens };
}
