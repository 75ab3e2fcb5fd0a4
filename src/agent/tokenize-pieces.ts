/**
 * Tokenising labelled text: the ids are those of the whole text (what the model would be given, equal to
 * transformers' tokenisation of the rendered template), and each token takes the role of the piece it starts
 * in. Tokenising piece by piece gives the same ids whenever no token crosses a piece boundary — true at
 * special tokens and at the newlines templates put around messages — so that is tried first; otherwise each
 * token's start is found by decoding the growing prefix (quadratic, and rare).
 */
import { StarpoError } from '../errors.ts';
import { type Piece, type TokenRole, roleCode } from './chat-format.ts';
import type { TextTokenizer } from './types.ts';

export interface LabelledIds {
  readonly ids: number[];
  /** roleCode of each token's owner. */
  readonly roles: number[];
}

export function tokenizePieces(tokenizer: TextTokenizer, pieces: readonly Piece[]): LabelledIds {
  const text = pieces.map((p) => p.text).join('');
  if (text === '') return { ids: [], roles: [] };
  const ids = tokenizer.encode(text);
  const parts = pieces.map((p) => tokenizer.encode(p.text));
  if (parts.reduce((n, p) => n + p.length, 0) === ids.length && parts.flat().every((id, i) => id === ids[i])) {
    return { ids, roles: parts.flatMap((p, k) => p.map(() => roleCode(pieces[k].role))) };
  }
  return { ids, roles: rolesByOffsets(tokenizer, ids, pieces) };
}

function rolesByOffsets(tokenizer: TextTokenizer, ids: number[], pieces: readonly Piece[]): number[] {
  const owners: TokenRole[] = pieces.flatMap((p) => Array.from(p.text, () => p.role));
  const roles: number[] = [];
  let start = 0;
  for (let i = 0; i < ids.length; i++) {
    roles.push(roleCode(owners[Math.min(start, owners.length - 1)] ?? 'template'));
    start = Array.from(tokenizer.decode(ids.slice(0, i + 1))).length;
  }
  if (roles.length !== ids.length) throw new StarpoError('tokenizePieces: role count mismatch');
  return roles;
}
