/**
 * Format checks of the tool rewards, on what the model wrote (tool results already removed). The
 * response is read as a sequence of blocks — <think>, <tool_call>, <answer> and ``` code fences (a code
 * call) — with only whitespace between them; any other text outside a block breaks the structure.
 * Linear scans, no regular-expression backtracking on hostile text.
 */
import type { FormatCheckName } from './types.ts';

type Block = 'think' | 'call' | 'answer';

const TAGS: ReadonlyArray<readonly [open: string, close: string, block: Block]> = [
  ['<think>', '</think>', 'think'],
  ['<tool_call>', '</tool_call>', 'call'],
  ['<answer>', '</answer>', 'answer'],
  ['```', '```', 'call'],
];

/** The response's blocks in order, or null when text outside blocks or an unclosed block breaks it. */
export function blockSequence(text: string): Block[] | null {
  const out: Block[] = [];
  let at = 0;
  for (;;) {
    while (at < text.length && /\s/.test(text[at] as string)) at++;
    if (at >= text.length) return out;
    const tag = TAGS.find(([open]) => text.startsWith(open, at));
    if (!tag) return null;
    const close = text.indexOf(tag[1], at + tag[0].length);
    if (close < 0) return null;
    out.push(tag[2]);
    at = close + tag[1].length;
  }
}

/** ToolRL: a think block first, then think/call blocks, ending with a call or the one answer. */
function toolrlStructure(blocks: Block[]): boolean {
  const last = blocks[blocks.length - 1];
  const answers = blocks.filter((b) => b === 'answer').length;
  return blocks[0] === 'think' && (last === 'call' || last === 'answer') && answers <= 1 && blocks.length >= 2;
}

/** Think first, the one answer last, calls and further thinking in between. */
function thinkAnswerStructure(blocks: Block[]): boolean {
  const answers = blocks.filter((b) => b === 'answer').length;
  return blocks[0] === 'think' && blocks[blocks.length - 1] === 'answer' && answers === 1;
}

export const FORMAT_CHECKS: Record<FormatCheckName, (response: string) => boolean> = {
  toolrl: (r) => {
    const blocks = blockSequence(r);
    return blocks !== null && toolrlStructure(blocks);
  },
  'think-answer': (r) => {
    const blocks = blockSequence(r);
    return blocks !== null && thinkAnswerStructure(blocks);
  },
  /** A non-empty \boxed{…} somewhere (the compact template has no tags). */
  boxed: (r) => /\\boxed\{[^}]+\}/.test(r),
  none: () => true,
};

/** A format check over a sample: its one response, or the mean over its turns (multi-turn trajectories). */
export function formatScore(
  sample: { response: string; turns?: readonly string[] },
  check: (response: string) => boolean,
): number {
  const turns = sample.turns && sample.turns.length > 0 ? sample.turns : [sample.response];
  return turns.filter((t) => check(t)).length / turns.length;
}

/** <think>…</think> present (Tool-N1's reasoning requirement). */
export function hasThink(response: string): boolean {
  const open = response.indexOf('<think>');
  return open >= 0 && response.indexOf('</think>', open + 7) >= 0;
}

export const FORMAT_CHECK_NAMES = Object.keys(FORMAT_CHECKS) as FormatCheckName[];
