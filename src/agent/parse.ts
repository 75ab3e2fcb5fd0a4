/**
 * Parsing model responses (docs/spec.md §3). Hostile output never throws: megabytes of text, lone
 * surrogates, nested or unclosed tags and control characters all end as a format failure at worst.
 * Work is bounded: only the first `maxChars` characters are read, and every scan is linear.
 */

/** Characters of a response that are parsed; the rest is ignored (a format reminder asks for short answers). */
export const MAX_PARSE_CHARS = 65536;

/**
 * Where the answer sits in a response:
 * - think:  the first match of /<think>(.*?)<\/think>\s*<answer>(.*?)<\/answer>/s
 * - answer: the first match of /<answer>(.*?)<\/answer>/s (the no-think variant)
 * - line:   everything before the first newline (the compact template; the newline ends the turn)
 */
export type AnswerStyle = 'think' | 'answer' | 'line';

export interface ParseOptions {
  style: AnswerStyle;
  /** Separator between actions in the answer: " || " in the full template, "|" in the compact one. */
  separator: string;
  /** Pieces kept after splitting (max actions per turn); later pieces are ignored without penalty. */
  maxActions: number;
  /** Canonical action for a trimmed piece, or null for an unknown action. */
  match: (piece: string) => string | null;
  maxChars?: number;
}

export interface ParsedResponse {
  think: string | null;
  /** The answer text, or null when the response has no answer in the expected format. */
  answer: string | null;
  /** Canonical actions to execute, in order. */
  actions: string[];
  /** Kept pieces that are not actions; they are dropped and cost the format penalty. */
  unknown: string[];
  /** Non-empty pieces beyond maxActions (ignored, not penalised, as in RAGEN). */
  overflow: number;
  /** True when the turn earns the format penalty: a dropped action, or no action at all. */
  formatError: boolean;
}

const SPACE = /\s/;
const THINK_OPEN = '<think>';
const THINK_CLOSE = '</think>';
const ANSWER_OPEN = '<answer>';
const ANSWER_CLOSE = '</answer>';

/**
 * Same result as the "think" regex, in linear time. The match, if any, starts at the first
 * "<think>" (a later start only has fewer candidate "</think>"s), its think part ends at the first
 * "</think>" followed by optional whitespace and "<answer>", and its answer at the next "</answer>".
 */
export function extractThinkAnswer(text: string): { think: string; answer: string } | null {
  const start = text.indexOf(THINK_OPEN);
  if (start < 0) return null;
  const bodyStart = start + THINK_OPEN.length;
  for (let end = text.indexOf(THINK_CLOSE, bodyStart); end >= 0; end = text.indexOf(THINK_CLOSE, end + 1)) {
    let p = end + THINK_CLOSE.length;
    while (p < text.length && SPACE.test(text[p] as string)) p++;
    if (!text.startsWith(ANSWER_OPEN, p)) continue;
    const close = text.indexOf(ANSWER_CLOSE, p + ANSWER_OPEN.length);
    // No "</answer>" after this "<answer>" means none after any later one either.
    if (close < 0) return null;
    return { think: text.slice(bodyStart, end), answer: text.slice(p + ANSWER_OPEN.length, close) };
  }
  return null;
}

/** Same result as the "answer" regex: the first "<answer>" and the first "</answer>" after it. */
export function extractAnswer(text: string): string | null {
  const open = text.indexOf(ANSWER_OPEN);
  if (open < 0) return null;
  const close = text.indexOf(ANSWER_CLOSE, open + ANSWER_OPEN.length);
  return close < 0 ? null : text.slice(open + ANSWER_OPEN.length, close);
}

function locate(text: string, style: AnswerStyle): { think: string | null; answer: string | null } {
  if (style === 'think') {
    const found = extractThinkAnswer(text);
    return found ?? { think: null, answer: null };
  }
  if (style === 'answer') return { think: null, answer: extractAnswer(text) };
  const newline = text.indexOf('\n');
  return { think: null, answer: newline < 0 ? text : text.slice(0, newline) };
}

const FORMAT_FAILURE: ParsedResponse = Object.freeze({
  think: null,
  answer: null,
  actions: [],
  unknown: [],
  overflow: 0,
  formatError: true,
}) as ParsedResponse;

/**
 * Splits the answer on the separator, trims, drops empty pieces, keeps the first `maxActions`,
 * then matches each kept piece; unknown pieces are dropped and the valid ones still run.
 */
export function parseResponse(text: string, options: ParseOptions): ParsedResponse {
  if (typeof text !== 'string') return { ...FORMAT_FAILURE };
  try {
    const limit = options.maxChars ?? MAX_PARSE_CHARS;
    const bounded = text.length > limit ? text.slice(0, limit) : text;
    const { think, answer } = locate(bounded, options.style);
    if (answer === null) return { ...FORMAT_FAILURE, think };
    const pieces = answer
      .split(options.separator)
      .map((p) => p.trim())
      .filter((p) => p.length > 0);
    const kept = pieces.slice(0, Math.max(0, options.maxActions));
    const actions: string[] = [];
    const unknown: string[] = [];
    for (const piece of kept) {
      const action = options.match(piece);
      if (action === null) unknown.push(piece);
      else actions.push(action);
    }
    const overflow = pieces.length - kept.length;
    return { think, answer, actions, unknown, overflow, formatError: unknown.length > 0 || actions.length === 0 };
  } catch {
    // Defensive: a matcher or a runtime limit (e.g. out of memory on a split) must not kill a rollout.
    return { ...FORMAT_FAILURE };
  }
}
