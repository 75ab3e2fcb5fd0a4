/**
 * The mask audit's data (pure): what each logged token is shown as, and what a trajectory's token log
 * says about its turns. Text is decoded per token id, once per run into a shared table, because the
 * page shows tokens one by one and the same ids (template, prompt) recur in every trajectory.
 */
import { TOKEN_ROLES } from '../agent/chat-format.ts';
import type { Tokenizer } from '../policy/tokenizer/types.ts';
import type { RunTokens, TokenAudit } from './model.ts';

export type ReportTokenizer = Pick<Tokenizer, 'decode' | 'idToToken' | 'specialTokens'>;

/** A tokenizer for the run (see run-tokenizer.ts), or why there is none. */
export type TokenizerLookup =
  { tokenizer: ReportTokenizer; source: string; stopIds: readonly number[] } | { note: string };

const ASSISTANT = TOKEN_ROLES.indexOf('assistant');
const TOOL = TOKEN_ROLES.indexOf('tool');

/** GPT-2's byte-level alphabet (bytes_to_unicode) reversed: the character a byte-level BPE token uses → its byte. */
const BYTE_OF_CHAR: ReadonlyMap<string, number> = (() => {
  const printable = (b: number) => (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
  const map = new Map<string, number>();
  let shifted = 0;
  for (let b = 0; b < 256; b++) map.set(String.fromCodePoint(printable(b) ? b : 256 + shifted++), b);
  return map;
})();

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** The raw bytes a vocabulary entry stands for: a byte-level BPE token, or a byte-fallback "<0xE4>"; null otherwise. */
function vocabBytes(token: string | undefined): Uint8Array | null {
  if (token === undefined) return null;
  const fallback = /^<0x([0-9A-Fa-f]{2})>$/.exec(token);
  if (fallback) return Uint8Array.of(parseInt(fallback[1], 16));
  const bytes: number[] = [];
  for (const ch of token) {
    const b = BYTE_OF_CHAR.get(ch);
    if (b === undefined) return null;
    bytes.push(b);
  }
  return Uint8Array.from(bytes);
}

function isWholeUtf8(bytes: Uint8Array): boolean {
  try {
    strictUtf8.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/**
 * One token as the page shows it. A token that is only part of a multi-byte character decodes on its
 * own to U+FFFD, which would hide what it is; such tokens are shown as their bytes instead.
 */
export function tokenPiece(tokenizer: ReportTokenizer, id: number): { text: string } | { bytes: string } | null {
  let text: string;
  try {
    text = tokenizer.decode([id]);
  } catch {
    return null; // not in the vocabulary: the page shows the id alone
  }
  if (!text.includes('\uFFFD')) return { text };
  const bytes = vocabBytes(tokenizer.idToToken(id));
  if (bytes === null || isWholeUtf8(bytes)) return { text };
  return { bytes: Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join(' ') };
}

/** The shared table for the ids of the shown trajectories, or the note saying why there is no text. */
export function runTokens(lookup: TokenizerLookup, ids: Iterable<number>): RunTokens {
  const base: RunTokens = {
    roles: [...TOKEN_ROLES],
    tokenizer: null,
    note: null,
    stop: null,
    text: {},
    bytes: {},
    special: [],
  };
  if ('note' in lookup) return { ...base, note: lookup.note };
  const { tokenizer } = lookup;
  const specialIds = new Set(tokenizer.specialTokens.values());
  const out: RunTokens = { ...base, tokenizer: lookup.source, stop: [...lookup.stopIds] };
  for (const id of new Set(ids)) {
    const piece = tokenPiece(tokenizer, id);
    if (piece && 'text' in piece) out.text[id] = piece.text;
    else if (piece) out.bytes[id] = piece.bytes;
    if (specialIds.has(id)) out.special.push(id);
  }
  out.special.sort((a, b) => a - b);
  return out;
}

/** Model-written spans: assistant tokens and the tool output between them (a tool call's result is inside the turn). */
function responseSpans(roles: string): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  const inside = (i: number) => Number(roles[i]) === ASSISTANT || Number(roles[i]) === TOOL;
  for (let i = 0; i < roles.length; i++) {
    if (Number(roles[i]) !== ASSISTANT || (i > 0 && inside(i - 1))) continue;
    let end = i;
    while (end < roles.length && inside(end)) end++;
    spans.push([i, end]);
  }
  return spans;
}

/** What the audit summarises: per-role counts, the loss count, each response span and whether it ends with a stop. */
export function auditTokens(
  ids: readonly number[],
  roles: string,
  turns: number,
  stopIds: readonly number[] | null,
): TokenAudit {
  const counts = TOKEN_ROLES.map(() => 0);
  const problems: string[] = [];
  if (roles.length !== ids.length) problems.push(`${roles.length} roles for ${ids.length} token ids`);
  const unknown = new Set<string>();
  for (const digit of roles) {
    const role = Number(digit);
    if (Number.isInteger(role) && role >= 0 && role < counts.length) counts[role]++;
    else unknown.add(digit);
  }
  if (unknown.size) problems.push(`unknown role digit(s) ${[...unknown].join(', ')}`);
  const stops = stopIds && new Set(stopIds);
  const responses = responseSpans(roles).map(([start, end]) => ({
    start,
    end,
    stop: stops ? Number(roles[end - 1]) === ASSISTANT && stops.has(ids[end - 1]) : null,
  }));
  // A turn whose model wrote nothing has no span, so the counts can differ without a mask bug; either way the
  // pairing of spans to turns is off.
  if (responses.length !== turns) problems.push(`${responses.length} model-written span(s) for ${turns} turn(s)`);
  return { counts, loss: counts[ASSISTANT], responses, problems };
}
