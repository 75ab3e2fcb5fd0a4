import type { TextTokenizer } from '../../../src/agent/types.ts';

/** Test helper: one id per code point, vocabulary grown on first sight. */
export function charTokenizer(): TextTokenizer {
  const ids = new Map<string, number>();
  const chars: string[] = [];
  return {
    encode(text) {
      return Array.from(text, (ch) => {
        let id = ids.get(ch);
        if (id === undefined) {
          id = chars.length;
          ids.set(ch, id);
          chars.push(ch);
        }
        return id;
      });
    },
    decode: (list) => list.map((id) => chars[id] ?? '\uFFFD').join(''),
  };
}
