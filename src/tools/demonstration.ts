/**
 * Tool-use demonstrations for a supervised warm-start: the response a solver would write, split into
 * model-written segments (trained) and tool results (template, not trained), and its ids with that mask.
 * The results are shown exactly as the protocol shows them, so demonstrations and rollouts agree.
 */
import type { TextTokenizer } from '../agent/types.ts';
import type { ToolFormat } from './formats.ts';
import { KEEP_CHARS, showResult } from './output.ts';
import type { ToolCall } from './types.ts';
import type { ToolResult } from '../envs/tool-provider.ts';

export interface DemonstrationStep {
  /** Model text before the call (reasoning), '' for none. */
  before?: string;
  call: Exclude<ToolCall, { kind: 'invalid' }>;
  result: ToolResult;
}

export interface Segment {
  text: string;
  trained: boolean;
}

/** The segments of a response: [before + call] (trained), [result block] (not), …, [final] (trained). */
export function toolDemonstration(
  format: ToolFormat,
  steps: readonly DemonstrationStep[],
  final: string,
  keep = KEEP_CHARS,
): Segment[] {
  const out: Segment[] = [];
  for (const step of steps) {
    out.push({ text: (step.before ?? '') + format.writeCall(step.call), trained: true });
    out.push({ text: format.wrapResult(showResult(step.result, keep)), trained: false });
  }
  out.push({ text: final, trained: true });
  return out;
}

/** Ids and loss mask of segments, each tokenised on its own (so the mask boundaries are exact). */
export function encodeSegments(
  segments: readonly Segment[],
  tokenizer: TextTokenizer,
): { ids: number[]; mask: number[] } {
  const ids: number[] = [];
  const mask: number[] = [];
  for (const s of segments) {
    if (!s.text) continue;
    for (const id of tokenizer.encode(s.text)) {
      ids.push(id);
      mask.push(s.trained ? 1 : 0);
    }
  }
  return { ids, mask };
}
