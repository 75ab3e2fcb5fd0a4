/**
 * The text of a reply as it is generated, for streaming: what can be sent now without ever being taken back. The
 * reply sent at the end (completion.ts) is the decoded text less the turn's stop token, cut at the first stop
 * sequence, with parsed tool-call blocks removed and trailing whitespace trimmed when a call was parsed. So while
 * tokens arrive, text is held back where that final form could still differ from it: an unfinished UTF-8 character,
 * anything from a stop sequence or a `<tool_call>` on (calls go out whole at the end), a tail that may be the start
 * of either, and trailing whitespace. What was sent is always a prefix of the final content; the rest follows it.
 */
import type { TextTokenizer } from '../agent/types.ts';

const CALL_OPEN = '<tool_call>';

export interface StreamedTextOptions {
  readonly tokenizer: TextTokenizer;
  /** Text the reply starts with that the model did not write (a forced tool call's opening). */
  readonly forced: string;
  /** The request's stop sequences. */
  readonly stops: readonly string[];
  /** Token ids that end the turn (left out of the text). */
  readonly stopTokenIds: readonly number[];
  /** Tool calls are parsed from the reply (the request has tools). */
  readonly calls: boolean;
}

export class StreamedText {
  private readonly tokens: number[] = [];
  private sent = '';
  private readonly marks: readonly string[];

  constructor(private readonly o: StreamedTextOptions) {
    this.marks = [...o.stops, ...(o.calls ? [CALL_OPEN] : [])].filter((m) => m !== '');
  }

  /** Takes the next generated token; returns the text that may be sent now ('' for none). */
  push(token: number): string {
    if (this.o.stopTokenIds.includes(token)) return '';
    this.tokens.push(token);
    const safe = this.safePrefix(this.o.forced + this.o.tokenizer.decode(this.tokens));
    if (safe.length <= this.sent.length || !safe.startsWith(this.sent)) return '';
    const delta = safe.slice(this.sent.length);
    this.sent = safe;
    return delta;
  }

  /** What was sent so far. */
  get text(): string {
    return this.sent;
  }

  private safePrefix(text: string): string {
    let end = text.endsWith('\uFFFD') ? text.length - 1 : text.length; // a character still missing bytes
    for (const mark of this.marks) {
      const at = text.indexOf(mark);
      if (at >= 0) end = Math.min(end, at);
    }
    // From the first position where the rest may still grow into a mark, nothing is sure yet.
    const longest = Math.max(0, ...this.marks.map((m) => m.length));
    for (let at = Math.max(0, end - longest + 1); at < end; at++) {
      const tail = text.slice(at, end);
      if (this.marks.some((m) => m.startsWith(tail))) {
        end = at;
        break;
      }
    }
    return text.slice(0, end).trimEnd();
  }
}
