/**
 * How tool calls and results are written in a response. A format names the stop strings at which
 * generation pauses, finds the complete call a piece of model text ends with, and wraps results as
 * template text (never trained). Three formats:
 *   code-fence     ```js\n<code>\n```\n  → ```output\n<result>\n```\n  (chats whose turn stop is a token)
 *   code-inline    ```js <code>```           → ```output <result>```           (one-line answers: the compact chat)
 *   function-call  <tool_call>{"name":…,"arguments":{…}}</tool_call> → <tool_response><result></tool_response>
 * A pause that is not the end of a call (an untagged fence, a ```python block, the opening fence of the
 * inline form) finds no call, and generation simply resumes.
 */
import { ConfigError, StarpoError } from '../errors.ts';
import { isJsonObject, jsonDepth, MAX_JSON_DEPTH } from './json.ts';
import type { ToolCall } from './types.ts';

export type ToolFormatName = 'code-fence' | 'code-inline' | 'function-call';

/** A complete call and where it sits in the text searched (for removing it from the answer text). */
export interface FoundCall {
  start: number;
  end: number;
  call: ToolCall;
}

export interface ToolFormat {
  readonly name: ToolFormatName;
  /** The kind of call this format writes. */
  readonly callKind: 'code' | 'function';
  /** Strings at which generation pauses to look for a call. */
  readonly stopStrings: readonly string[];
  /** The complete call ending at the last stop string in `text`, or null when that stop ends no call. */
  lastCall(text: string): FoundCall | null;
  /** Template text that carries a (shown) result back to the model. */
  wrapResult(shown: string): string;
  /** How a demonstration writes a call of `callKind` (the inverse of lastCall). */
  writeCall(call: Exclude<ToolCall, { kind: 'invalid' }>): string;
}

function wrongKind(format: string, call: ToolCall): never {
  throw new StarpoError(`tool format ${format} cannot write a ${call.kind} call`);
}

/** Languages a code fence may name to be run. */
const JS_TAGS = new Set(['js', 'javascript']);

const FENCE = '```';

function codeFence(): ToolFormat {
  const close = '\n```\n';
  return {
    name: 'code-fence',
    callKind: 'code',
    stopStrings: [close],
    lastCall(text) {
      const k = text.lastIndexOf(close);
      const open = k < 0 ? -1 : text.lastIndexOf(FENCE, k - 1);
      if (open < 0) return null;
      const lineEnd = text.indexOf('\n', open);
      const tag = text
        .slice(open + FENCE.length, lineEnd)
        .trim()
        .toLowerCase();
      if (!JS_TAGS.has(tag)) return null;
      const code = lineEnd + 1 <= k ? text.slice(lineEnd + 1, k) : '';
      return { start: open, end: k + close.length, call: { kind: 'code', language: tag, code } };
    },
    wrapResult: (shown) => `${FENCE}output\n${shown}\n${FENCE}\n`,
    writeCall: (call) =>
      call.kind === 'code' ? `${FENCE}js\n${call.code}\n${FENCE}\n` : wrongKind('code-fence', call),
  };
}

function codeInline(): ToolFormat {
  return {
    name: 'code-inline',
    callKind: 'code',
    stopStrings: [FENCE],
    lastCall(text) {
      const k = text.lastIndexOf(FENCE);
      const open = k < 1 ? -1 : text.lastIndexOf(FENCE, k - 1);
      if (open < 0 || open + FENCE.length > k) return null;
      const body = /^(\w+)\s([\s\S]*)$/.exec(text.slice(open + FENCE.length, k));
      if (!body || !JS_TAGS.has((body[1] as string).toLowerCase())) return null;
      const language = (body[1] as string).toLowerCase();
      const call: ToolCall = { kind: 'code', language, code: (body[2] as string).trim() };
      return { start: open, end: k + FENCE.length, call };
    },
    wrapResult: (shown) => `${FENCE}output ${shown}${FENCE}`,
    writeCall: (call) => (call.kind === 'code' ? `${FENCE}js ${call.code}${FENCE}` : wrongKind('code-inline', call)),
  };
}

const OPEN_TAG = '<tool_call>';
const CLOSE_TAG = '</tool_call>';

const functionCall: ToolFormat = {
  name: 'function-call',
  callKind: 'function',
  stopStrings: [CLOSE_TAG],
  lastCall(text) {
    const k = text.lastIndexOf(CLOSE_TAG);
    const open = k < 0 ? -1 : text.lastIndexOf(OPEN_TAG, k);
    if (open < 0) return null;
    const raw = text.slice(open + OPEN_TAG.length, k).trim();
    return { start: open, end: k + CLOSE_TAG.length, call: parseFunctionCall(raw) };
  },
  wrapResult: (shown) => `<tool_response>${shown}</tool_response>`,
  writeCall: (call) =>
    call.kind === 'function'
      ? `${OPEN_TAG}${JSON.stringify({ name: call.name, arguments: call.arguments })}${CLOSE_TAG}`
      : wrongKind('function-call', call),
};

/**
 * {"name": string, "arguments": object (optional, default {})}; anything else is an invalid call, and so is
 * JSON nested deeper than MAX_JSON_DEPTH (checked before parsing, in one pass over the text).
 */
export function parseFunctionCall(raw: string): ToolCall {
  if (jsonDepth(raw) > MAX_JSON_DEPTH) {
    return { kind: 'invalid', raw, reason: `JSON nests deeper than ${MAX_JSON_DEPTH} levels` };
  }
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return { kind: 'invalid', raw, reason: 'not valid JSON' };
  }
  if (!isJsonObject(value)) return { kind: 'invalid', raw, reason: 'not a JSON object' };
  const { name, arguments: args } = value;
  if (typeof name !== 'string' || name.length === 0) return { kind: 'invalid', raw, reason: 'no "name" string' };
  if (args !== undefined && !isJsonObject(args)) {
    return { kind: 'invalid', raw, reason: '"arguments" is not an object' };
  }
  return { kind: 'function', name, arguments: args ?? {} };
}

export const TOOL_FORMATS: Record<ToolFormatName, ToolFormat> = {
  'code-fence': codeFence(),
  'code-inline': codeInline(),
  'function-call': functionCall,
};

export const TOOL_FORMAT_NAMES = Object.keys(TOOL_FORMATS) as ToolFormatName[];

export function toolFormat(name: string): ToolFormat {
  if (!Object.hasOwn(TOOL_FORMATS, name)) {
    const known = Object.keys(TOOL_FORMATS).join(', ');
    throw new ConfigError('tools.format', `unknown tool format "${name}"; known: ${known}`);
  }
  return TOOL_FORMATS[name as ToolFormatName];
}

/**
 * Throws when a chat format's turn stop occurs inside this format's calls (a multi-line code fence
 * cannot work where a newline ends the turn: use code-inline there). Results are template text and
 * may hold anything. `where` names the config field to blame and the chat (template) the stop belongs to.
 */
export function checkFormatForChat(
  format: ToolFormat,
  turnStop: string,
  where: { field?: string; chat?: string } = {},
): void {
  const call =
    format.callKind === 'code'
      ? format.writeCall({ kind: 'code', language: 'js', code: 'x' })
      : format.writeCall({ kind: 'function', name: 'f', arguments: {} });
  if (turnStop && call.includes(turnStop)) {
    const of = where.chat ? ` of the ${where.chat} chat` : '';
    const why = `"${format.name}" calls contain the turn stop ${JSON.stringify(turnStop)}${of}; pick another format`;
    throw new ConfigError(where.field ?? 'tools.format', why);
  }
}
