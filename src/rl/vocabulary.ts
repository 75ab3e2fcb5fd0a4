import { createCharTokenizer } from '../policy/tokenizer/char.ts';
import type { Tokenizer } from '../policy/tokenizer/types.ts';

/**
 * The character vocabulary of models trained from scratch: printable ASCII, newline, and the
 * non-ASCII symbols the environments render (`√` box/player on target). Protocol tags are single
 * tokens so a tiny model learns the format cheaply. Every environment's text fits it.
 */
const PRINTABLE_ASCII = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)).join('');
export const SCRATCH_ALPHABET = `\n${PRINTABLE_ASCII}√`;
export const PROTOCOL_TOKENS = ['<think>', '</think>', '<answer>', '</answer>', '<|im_start|>', '<|im_end|>'];

export function scratchTokenizer(): Tokenizer {
  return createCharTokenizer({ characters: SCRATCH_ALPHABET, tokens: PROTOCOL_TOKENS });
}
