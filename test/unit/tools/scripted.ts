/**
 * Test helper: a generation backend that "writes" a fixed text per row, one character per token, and
 * stops like the real engine: after the token that completes a stop string (searched in the text this
 * call generated), or at maxNewTokens. Rows are recognised by their first prompt; each keeps a cursor,
 * so a row resumed after a tool result continues its text. Log-prob of the k-th written char: −(k+1)/100.
 */
import type { ToolTurnRequest } from '../../../src/tools/protocol.ts';
import type { RolloutGeneration } from '../../../src/policy/engine/handle.ts';
import assert from 'node:assert/strict';
import type { TextTokenizer } from '../../../src/agent/types.ts';
import type { GenerationBackend } from '../../../src/policy/engine/handle.ts';

/** ChatML's assistant header, and the result blocks of the code-fence and function-call formats. */
export const HEADER = '<|im_start|>assistant\n';
export const RESULT_BLOCK = /```output\n[\s\S]*?\n```\n|<tool_response>[\s\S]*?<\/tool_response>/g;

/**
 * A policy that writes `intended(prompt)` for the open assistant turn (ChatML), one char per token,
 * continuing after whatever it already wrote (tool results removed) and stopping like the engine at stop strings.
 */
export function writer(tokenizer: TextTokenizer, intended: (prompt: string) => string): GenerationBackend {
  return {
    async generate(req) {
      return req.prompts.map((ids) => {
        const prompt = tokenizer.decode(ids);
        const sofar = prompt.slice(prompt.lastIndexOf(HEADER) + HEADER.length).replace(RESULT_BLOCK, '');
        const full = intended(prompt);
        assert.ok(full.startsWith(sofar), `continuing ${JSON.stringify(sofar)}`);
        let out = '';
        for (const ch of full.slice(sofar.length)) {
          if (out.length >= req.maxNewTokens) break;
          out += ch;
          if (req.stopStrings.some((s) => out.includes(s))) break;
        }
        const tokens = tokenizer.encode(out);
        const stopped = req.stopStrings.some((s) => out.endsWith(s));
        const finishReason = stopped ? ('stop' as const) : ('length' as const);
        return { tokens, logprobs: tokens.map(() => -0.5), finishReason };
      });
    },
  };
}

export interface ScriptedBackend {
  generate(request: ToolTurnRequest): Promise<RolloutGeneration[]>;
  /** Every request, for assertions on batching and seeds. */
  requests: ToolTurnRequest[];
}

export function scriptedBackend(tokenizer: TextTokenizer, scripts: Map<string, string>): ScriptedBackend {
  const cursors = new Map<string, number>();
  const requests: ToolTurnRequest[] = [];
  const keyOf = (prompt: readonly number[]) => {
    const text = tokenizer.decode(prompt);
    for (const key of scripts.keys()) if (text.startsWith(key)) return key;
    throw new Error(`no script for prompt ${JSON.stringify(text)}`);
  };
  return {
    requests,
    async generate(request) {
      requests.push(request);
      return request.prompts.map((prompt) => {
        const key = keyOf(prompt);
        const script = scripts.get(key) as string;
        const start = cursors.get(key) ?? 0;
        let written = '';
        let finishReason: 'stop' | 'length' = 'length';
        for (let k = start; k < script.length && written.length < request.maxNewTokens; k++) {
          written += script[k];
          if (request.stopStrings.some((s) => written.includes(s))) {
            finishReason = 'stop';
            break;
          }
        }
        // The script ran out before the budget: the model ended its text (an end-of-sequence token).
        const ranOut = start + written.length >= script.length && written.length < request.maxNewTokens;
        if (ranOut && finishReason === 'length') finishReason = 'stop';
        cursors.set(key, start + written.length);
        const tokens = tokenizer.encode(written);
        return { tokens, logprobs: tokens.map((_, i) => -(start + i + 1) / 100), finishReason };
      });
    },
  };
}

/**
 * One row writing `script` one char per token, stopping like the engine at the first stop string, with a cost
 * per call linear in what it writes (it never reads the prompt): for measuring the protocol's own work.
 */
export function streamingBackend(
  tokenizer: TextTokenizer,
  script: string,
): (request: ToolTurnRequest) => Promise<RolloutGeneration[]> {
  let cursor = 0;
  return async (request) => {
    const limit = Math.min(script.length, cursor + request.maxNewTokens);
    let end = limit;
    for (const stop of request.stopStrings) {
      const at = script.indexOf(stop, cursor);
      if (at >= 0 && at + stop.length < end) end = at + stop.length;
    }
    const tokens = tokenizer.encode(script.slice(cursor, end));
    cursor = end;
    const finishReason = end < limit || cursor === script.length ? ('stop' as const) : ('length' as const);
    return [{ tokens, logprobs: tokens.map(() => -0.5), finishReason }];
  };
}
