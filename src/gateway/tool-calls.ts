/**
 * Tool calls in what the model wrote, as Qwen's (Hermes-style) templates ask for them:
 * `<tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call>`, one block per call. Each block that parses
 * (tools/formats.ts parseFunctionCall) becomes an OpenAI tool call and leaves the message content; a block
 * that does not parse stays in the content as the model wrote it, so nothing the model said is lost.
 */
import { parseFunctionCall } from '../tools/formats.ts';

const OPEN = '<tool_call>';
const CLOSE = '</tool_call>';

export interface ParsedReply {
  /** The text less the parsed call blocks (and the whitespace they leave at the end). */
  readonly content: string;
  readonly calls: readonly { readonly name: string; readonly arguments: string }[];
}

export function parseToolCalls(text: string): ParsedReply {
  const calls: { name: string; arguments: string }[] = [];
  let content = '';
  let at = 0;
  for (;;) {
    const open = text.indexOf(OPEN, at);
    const close = open < 0 ? -1 : text.indexOf(CLOSE, open + OPEN.length);
    if (close < 0) break;
    const call = parseFunctionCall(text.slice(open + OPEN.length, close).trim());
    const end = close + CLOSE.length;
    if (call.kind === 'function') {
      calls.push({ name: call.name, arguments: JSON.stringify(call.arguments) });
      content += text.slice(at, open);
    } else {
      content += text.slice(at, end);
    }
    at = end;
  }
  content += text.slice(at);
  return { content: calls.length > 0 ? content.trimEnd() : content, calls };
}
