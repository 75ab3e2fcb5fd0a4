/**
 * Stop-string detection during incremental decoding, for a batch of sequences.
 *
 * Each step decodes only the new token(s) in the context of the few tokens before them (decode(context + new)
 * minus decode(context)), the way streaming detokenizers do: byte-level BPE may split one character over
 * several tokens, and SentencePiece-style decoders treat a word's leading space differently at the start of
 * a text. A new piece that ends in U+FFFD (an incomplete UTF-8 character) waits for the next token. Only the
 * last (longest stop length - 1) characters of text are kept, so a step costs the same at any sequence length.
 */
import { StarpoError } from '../../errors.ts';

export interface StopMatcherOptions {
  readonly stopStrings: readonly string[];
  readonly batchSize: number;
  /** Decodes a short run of token ids (typically tokenizer.decode). */
  readonly decode: (ids: readonly number[]) => string;
  /** Tokens of context kept before new ones when decoding (default 4). */
  readonly contextTokens?: number;
}

/** A character split over more tokens than this is given up on and emitted as decoded (with U+FFFD). */
const MAX_PENDING_TOKENS = 8;

interface SequenceState {
  /** Recently emitted token ids, decoded as context for the next piece. */
  context: number[];
  contextText: string;
  /** Tokens whose text is not yet complete. */
  pending: number[];
  /** The last characters of the text, long enough to hold all but one character of any stop string. */
  tail: string;
  matched: string | null;
}

export class StopMatcher {
  private readonly stops: readonly string[];
  private readonly keep: number;
  private readonly contextTokens: number;
  private readonly decode: (ids: readonly number[]) => string;
  private readonly seqs: SequenceState[];

  constructor(options: StopMatcherOptions) {
    this.stops = options.stopStrings.filter((s) => s.length > 0);
    this.keep = Math.max(0, ...this.stops.map((s) => s.length)) - 1;
    this.contextTokens = options.contextTokens ?? 4;
    this.decode = options.decode;
    this.seqs = Array.from({ length: options.batchSize }, fresh);
  }

  /** Appends a sampled token to sequence `seq`; returns the stop string it completed, or null. */
  push(seq: number, token: number): string | null {
    const s = this.state(seq);
    if (s.matched !== null || this.stops.length === 0) return s.matched;
    s.pending.push(token);
    const piece = this.newText(s);
    if (piece.endsWith('\uFFFD') && s.pending.length < MAX_PENDING_TOKENS) return null;
    s.context = s.context.concat(s.pending).slice(-this.contextTokens);
    s.contextText = this.decode(s.context);
    s.pending = [];
    // A stop lying wholly inside the old tail would have matched at an earlier step, so searching it is harmless.
    const text = s.tail + piece;
    for (const stop of this.stops) {
      if (text.includes(stop)) {
        s.matched = stop;
        break;
      }
    }
    s.tail = this.keep === 0 ? '' : text.slice(-this.keep);
    return s.matched;
  }

  /** The stop string sequence `seq` has produced, or null. */
  matched(seq: number): string | null {
    return this.state(seq).matched;
  }

  /** Forgets sequence `seq` (for reuse of its batch slot). */
  reset(seq: number): void {
    this.state(seq);
    this.seqs[seq] = fresh();
  }

  private newText(s: SequenceState): string {
    const full = this.decode(s.context.concat(s.pending));
    if (full.startsWith(s.contextText)) return full.slice(s.contextText.length);
    // A decoder that rewrites earlier text (rare): take whatever differs from the context's own decoding.
    let common = 0;
    while (common < full.length && full[common] === s.contextText[common]) common++;
    return full.slice(common);
  }

  private state(seq: number): SequenceState {
    const s = this.seqs[seq];
    if (s === undefined) throw new StarpoError(`sequence ${seq} is outside the batch of ${this.seqs.length}`);
    return s;
  }
}

function fresh(): SequenceState {
  return { context: [], contextText: '', pending: [], tail: '', matched: null };
}
