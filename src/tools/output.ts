/**
 * What a tool result looks like to the model (docs/spec.md §6): an error is cut to its last line, and a long
 * text keeps its first and last `keep` characters around an ASCII marker (every tokenizer has "...").
 */
import type { ToolResult } from '../envs/tool-provider.ts';

/** Characters kept at each end of a long tool output. */
export const KEEP_CHARS = 128;
export const ELISION = '...';

/** The text shown inside the result block. */
export function showResult(result: ToolResult, keep = KEEP_CHARS): string {
  const text = result.ok ? result.output.replace(/\s+$/, '') : lastLine(result.error ?? 'Error');
  return elide(text, keep);
}

/** The last non-blank line, trimmed (a stack trace's last line is usually the message Python/Node users read). */
export function lastLine(text: string): string {
  const lines = text.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = (lines[i] as string).trim();
    if (line) return line;
  }
  return '';
}

/** `text` unchanged when at most 2·keep characters, else its first and last `keep` characters around "...". */
export function elide(text: string, keep = KEEP_CHARS): string {
  if (text.length <= 2 * keep) return text;
  return text.slice(0, safeCut(text, keep)) + ELISION + text.slice(safeCut(text, text.length - keep));
}

/** Moves a cut off the middle of a surrogate pair, so no lone half reaches the tokenizer. */
function safeCut(text: string, at: number): number {
  const code = text.charCodeAt(at);
  return code >= 0xdc00 && code <= 0xdfff ? at + 1 : at;
}
