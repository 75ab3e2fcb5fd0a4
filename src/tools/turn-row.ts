/**
 * One assistant turn with tools, as it grows: the ids appended after the assistant header (model-written,
 * mask 1, and tool results, mask 0), their sampling log-probs, the calls made, and the text split into
 * model and tool segments. The protocol loop (protocol.ts) drives it; this module only keeps the books.
 * Every token is decoded a bounded number of times, so a turn costs time linear in its length however
 * many pauses and calls it holds: a model segment ends at a tool result or after a call, and a pause is
 * first checked on the text since the previous pause only (windowText).
 */
import type { TextTokenizer } from '../agent/types.ts';
import type { FoundCall } from './formats.ts';
import type { ToolCallRecord } from './types.ts';

interface Segment {
  text: string;
  /** Written by the model (true) or appended tool output / notice (false). */
  model: boolean;
  /** Where the model segment's calls sit in `text` (removed from the answer text). */
  calls: { start: number; end: number }[];
}

/** The finished turn: a drop-in superset of one row of a plain generation. */
export interface ToolGeneration {
  /** Every id after the assistant header: model-written ids and tool-result ids, in order. */
  tokens: number[];
  /** 1 on model-written ids, 0 on tool-result ids (aligned with tokens). */
  mask: number[];
  /** Sampling log-prob of each model-written id; 0 on tool-result ids. */
  logprobs: number[];
  /**
   * Entropy of each model-written id's sampling distribution, 0 on tool-result ids; absent when a round reported none.
   */
  entropies?: number[];
  /** 'stop': the tokens end with the turn stop the model wrote; 'length': cut at a budget. */
  finishReason: 'stop' | 'length';
  /** All of it decoded, tool results included (what the context holds). */
  text: string;
  /** Only what the model wrote, turn stop removed. */
  modelText: string;
  /** What the model wrote with its tool calls removed, turn stop removed: the text to parse for an answer. */
  answerText: string;
  calls: ToolCallRecord[];
  /** Generation calls this row took part in. */
  rounds: number;
}

export class ToolRow {
  readonly tokens: number[] = [];
  readonly mask: number[] = [];
  readonly logprobs: number[] = [];
  /** null once a round came without entropies. */
  private entropies: number[] | null = [];
  readonly calls: ToolCallRecord[] = [];
  private readonly segments: Segment[] = [];
  /** Index in `tokens` where the current model segment starts. */
  private segmentStart = 0;
  /** Calls found so far in the current model segment. */
  private spans: { start: number; end: number }[] = [];
  /** The prompt followed by every id so far: the next round's prompt, grown in place. */
  private readonly context: number[];
  /** Where the previous and the current generation round's ids start in `tokens`. */
  private previousRound = 0;
  private currentRound = 0;
  /** Calls that ran (the per-response limit counts these). */
  executed = 0;
  written = 0;
  rounds = 0;
  noticeGiven = false;
  done = false;
  finish: 'stop' | 'length' = 'length';

  constructor(
    readonly prompt: readonly number[],
    readonly seed: number,
    private readonly tokenizer: TextTokenizer,
  ) {
    this.context = prompt.slice();
  }

  /** Tokens this row occupies in the model's context now. */
  get contextLength(): number {
    return this.prompt.length + this.tokens.length;
  }

  /**
   * The prompt of the next generation round: the turn's prompt plus everything appended so far. The same
   * array grows from round to round (no copy per round); a backend reads it during its call only.
   */
  nextPrompt(): readonly number[] {
    return this.context;
  }

  encode(text: string): number[] {
    return this.tokenizer.encode(text);
  }

  decode(ids: readonly number[]): string {
    return this.tokenizer.decode(ids);
  }

  addModel(ids: readonly number[], logprobs: readonly number[], entropies?: readonly number[]): void {
    this.previousRound = this.currentRound;
    this.currentRound = this.tokens.length;
    if (!entropies) this.entropies = null;
    for (let i = 0; i < ids.length; i++) {
      this.tokens.push(ids[i] as number);
      this.context.push(ids[i] as number);
      this.mask.push(1);
      this.logprobs.push(logprobs[i] ?? 0);
      this.entropies?.push(entropies![i] ?? 0);
    }
    this.written += ids.length;
  }

  /** The model text since the last tool result or call (may span several rounds after false pauses). */
  segmentText(): string {
    return this.tokenizer.decode(this.tokens.slice(this.segmentStart));
  }

  /**
   * The segment's text from the token before the previous round on. Every earlier round of the segment
   * ended in a pause that held no call, so a call ending in this round starts inside this window (each
   * format's opener is found at or after the previous stop): no call here means no call in segmentText().
   */
  windowText(): string {
    return this.tokenizer.decode(this.tokens.slice(Math.max(this.segmentStart, this.previousRound - 1)));
  }

  /** Ends the model segment after a call that appended nothing (not run), so later searches start after it. */
  splitSegment(): void {
    if (this.spans.length === 0) return; // already closed by an appended notice
    this.closeSegment(this.segmentText());
    this.segmentStart = this.tokens.length;
  }

  /** Notes a call in the current model segment (offsets in segmentText()). */
  markCall(found: FoundCall): void {
    this.spans.push({ start: found.start, end: found.end });
  }

  /** Closes the model segment and appends tool template ids (mask 0). */
  addToolText(ids: readonly number[], text: string): void {
    this.closeSegment(this.segmentText());
    this.segments.push({ text, model: false, calls: [] });
    for (const id of ids) {
      this.tokens.push(id);
      this.context.push(id);
      this.mask.push(0);
      this.logprobs.push(0);
      this.entropies?.push(0);
    }
    this.segmentStart = this.tokens.length;
  }

  end(finish: 'stop' | 'length', turnStops: readonly string[]): void {
    this.done = true;
    this.finish = finish;
    const text = this.segmentText();
    this.closeSegment(finish === 'stop' ? cutAtStop(text, turnStops) : text);
  }

  private closeSegment(text: string): void {
    this.segments.push({ text, model: true, calls: this.spans.filter((c) => c.end <= text.length) });
    this.spans = [];
  }

  result(): ToolGeneration {
    const model = this.segments.filter((s) => s.model);
    return {
      tokens: this.tokens.slice(),
      mask: this.mask.slice(),
      logprobs: this.logprobs.slice(),
      ...(this.entropies ? { entropies: this.entropies.slice() } : {}),
      finishReason: this.finish,
      text: this.tokenizer.decode(this.tokens),
      modelText: model.map((s) => s.text).join(''),
      answerText: model.map(withoutCalls).join(''),
      calls: this.calls.slice(),
      rounds: this.rounds,
    };
  }
}

function withoutCalls(segment: Segment): string {
  let out = '';
  let at = 0;
  for (const c of segment.calls) {
    out += segment.text.slice(at, c.start);
    at = c.end;
  }
  return out + segment.text.slice(at);
}

/** `text` up to the first turn stop in it (the stop and anything a token carried past it removed). */
function cutAtStop(text: string, stops: readonly string[]): string {
  let cut = text.length;
  for (const stop of stops) {
    const at = stop ? text.indexOf(stop) : -1;
    if (at >= 0 && at < cut) cut = at;
  }
  return text.slice(0, cut);
}

/** The stop string that ended `text` first (earliest end; a turn stop wins a tie), or null. */
export function firstStop(
  text: string,
  turnStops: readonly string[],
  toolStops: readonly string[],
): { stop: string; tool: boolean } | null {
  let best: { stop: string; tool: boolean; end: number } | null = null;
  for (const [stops, tool] of [
    [turnStops, false],
    [toolStops, true],
  ] as const) {
    for (const stop of stops) {
      const at = stop ? text.indexOf(stop) : -1;
      if (at >= 0 && (best === null || at + stop.length < best.end)) best = { stop, tool, end: at + stop.length };
    }
  }
  return best && { stop: best.stop, tool: best.tool };
}
