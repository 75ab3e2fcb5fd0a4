/**
 * What the gateway tests share: the real Qwen3 tokenizer and chat template (thinking off, so prompts are short),
 * and a scripted generation backend — the GenerationBackend interface the rollout's tests script too — that
 * answers each row with the next scripted text and records every prompt and seed it was given.
 */
import OpenAI from 'openai';
import type { ChatFormat } from '../../../src/agent/chat-format.ts';
import { GenerationBatcher } from '../../../src/gateway/batcher.ts';
import type { CompletionSettings } from '../../../src/gateway/completion.ts';
import { gatewayChat } from '../../../src/gateway/prompt.ts';
import { startGateway } from '../../../src/gateway/server.ts';
import { episodeTrajectories } from '../../../src/gateway/trajectories.ts';
import type { GenerationBackend } from '../../../src/policy/engine/handle.ts';
import { modelChatFormat } from '../../../src/rl/run-model.ts';
import { realTokenizer, realTokenizerFiles } from '../agent/real-tokenizers.ts';

export const tokenizer = realTokenizer('qwen3');
export const IM_END = 151645;

export function qwen3Chat(thinking: 'on' | 'off' = 'off'): ChatFormat {
  return modelChatFormat({ chatThinking: thinking }, realTokenizerFiles('qwen3'), tokenizer, [IM_END, 151643]);
}

export interface Scripted extends GenerationBackend {
  /** Every prompt generated from, in order. */
  readonly prompts: number[][];
  /** Every sampled token list returned, in order. */
  readonly sampled: number[][];
  readonly seeds: number[];
}

/**
 * Replies in order (cycling); one ending with a stop token id stops with it; log-prob of token i is −(i+1)/8. A
 * request that streams gets its tokens one step at a time, a few milliseconds apart, as an engine hands them out.
 */
export function scripted(replies: readonly string[]): Scripted {
  let n = 0;
  const backend: Scripted = {
    prompts: [],
    sampled: [],
    seeds: [],
    async generate(req) {
      const rows = req.prompts.map((prompt, row) => {
        const tokens = tokenizer.encode(replies[n++ % replies.length]).slice(0, req.maxNewTokens);
        backend.prompts.push([...prompt]);
        backend.sampled.push(tokens);
        backend.seeds.push(req.rowSeeds[row]);
        const finishReason = req.stopTokenIds.includes(tokens[tokens.length - 1])
          ? ('stop' as const)
          : ('length' as const);
        return { tokens, logprobs: tokens.map((_, i) => -(i + 1) / 8), finishReason };
      });
      for (let step = 0; req.onToken && step < Math.max(...rows.map((r) => r.tokens.length)); step++) {
        rows.forEach((r, row) => step < r.tokens.length && req.onToken!(row, r.tokens[step]));
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      return rows;
    },
  };
  return backend;
}

/** Completion settings around a backend, as a gateway builds them (request sampling, seed 0 for every call). */
export function settingsFor(backend: GenerationBackend, maxContext = 4096): CompletionSettings {
  return {
    chat: gatewayChat(qwen3Chat(), tokenizer),
    tokenizer,
    batcher: new GenerationBatcher(backend),
    maxContext,
    defaultMaxTokens: 64,
    maxTokensCap: 64,
    sampling: null,
    rowSeed: () => 0,
  };
}

export const CALC_TOOL = {
  type: 'function',
  function: {
    name: 'calc',
    description: 'Evaluates arithmetic.',
    parameters: { type: 'object', properties: { expr: { type: 'string' } }, required: ['expr'] },
  },
} as const;

/** A gateway on the scripted backend with one episode, driven by `fn` through the openai SDK; its trajectories. */
export async function withGateway(backend: Scripted, fn: (client: OpenAI) => Promise<void>) {
  const gateway = await startGateway({
    backend,
    tokenizer,
    chat: qwen3Chat(),
    modelName: 'm',
    maxContext: 4096,
    defaultMaxTokens: 64,
  });
  try {
    const episode = gateway.episodes.issue('e1');
    await fn(new OpenAI({ baseURL: gateway.url, apiKey: episode.token, maxRetries: 0 }));
    return episodeTrajectories(episode.calls, 'prefix', { reward: 1, success: true });
  } finally {
    await gateway.close();
  }
}
