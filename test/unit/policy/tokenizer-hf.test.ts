import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError } from '../../../src/errors.ts';
import { loadHfTokenizer } from '../../../src/policy/tokenizer/hf.ts';
import { loadTokenizer } from '../../../src/policy/tokenizer/load.ts';
import { StopMatcher } from '../../../src/policy/sampling/stop.ts';

/** GPT-2's byte → printable character table, which byte-level BPE vocabularies are written in. */
function bytesToUnicode(): string[] {
  const printable = [...range(33, 126), ...range(161, 172), ...range(174, 255)];
  const out: string[] = [];
  let extra = 0;
  for (let b = 0; b < 256; b++) out[b] = String.fromCodePoint(printable.includes(b) ? b : 256 + extra++);
  return out;
}
function range(a: number, b: number): number[] {
  return Array.from({ length: b - a + 1 }, (_, i) => a + i);
}

/** A Qwen2-shaped tokenizer.json: 256 byte tokens, five merges, three special tokens. */
function tinyQwenTokenizer() {
  const vocab: Record<string, number> = {};
  bytesToUnicode().forEach((c, b) => (vocab[c] = b));
  const merges = [
    ['h', 'e'],
    ['l', 'l'],
    ['he', 'll'],
    ['hell', 'o'],
    ['Ġ', 'w'],
  ];
  merges.forEach(([a, b], i) => (vocab[a + b] = 256 + i));
  const specials = ['<|endoftext|>', '<|im_start|>', '<|im_end|>'];
  const byteLevel = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false };
  // Qwen2's pre-tokenizer regex.
  const split =
    String.raw`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}|` +
    String.raw` ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`;
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: specials.map((content, i) => ({
      id: 261 + i,
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    })),
    normalizer: { type: 'NFC' },
    pre_tokenizer: {
      type: 'Sequence',
      pretokenizers: [{ type: 'Split', pattern: { Regex: split }, behavior: 'Isolated', invert: false }, byteLevel],
    },
    post_processor: byteLevel,
    decoder: byteLevel,
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: '',
      end_of_word_suffix: '',
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab,
      merges,
    },
  };
}
const CONFIG = {
  eos_token: '<|im_end|>',
  pad_token: '<|endoftext|>',
  bos_token: null,
  clean_up_tokenization_spaces: false,
};

test('applies the known merges', () => {
  const tok = loadHfTokenizer(tinyQwenTokenizer(), CONFIG);
  const ids = tok.encode('hello world');
  assert.deepEqual(
    ids.map((id) => tok.idToToken(id)),
    ['hello', 'Ġw', 'o', 'r', 'l', 'd'],
  );
  assert.deepEqual(ids, [259, 260, 111, 114, 108, 100]);
  assert.deepEqual(tok.encode('hell he'), [258, 32, 256]); // no 'Ġhe' merge: ' he' is 'Ġ' (byte 32) + 'he'
});

test('round-trips any text, multi-byte characters included', () => {
  const tok = loadHfTokenizer(tinyQwenTokenizer(), CONFIG);
  for (const text of ['hello world', 'héllo 😀\n\n  x', 'a , b ; c', '<|im_start|>user\nhi<|im_end|>', '']) {
    assert.equal(tok.decode(tok.encode(text)), text);
  }
});

test('reads special tokens from tokenizer_config.json', () => {
  const tok = loadHfTokenizer(tinyQwenTokenizer(), CONFIG);
  assert.deepEqual([tok.eosId, tok.padId, tok.bosId, tok.unkId, tok.vocabSize], [263, 261, null, null, 264]);
  assert.deepEqual([...tok.specialTokens.keys()], ['<|endoftext|>', '<|im_start|>', '<|im_end|>']);
  assert.deepEqual(tok.encode('hi<|im_end|>'), [104, 105, 263]);
  assert.equal(tok.decode([262, 259, 263], { skipSpecialTokens: true }), 'hello');
});

test('accepts AddedToken objects and overrides, and requires an EOS', () => {
  const objectConfig = { eos_token: { __type: 'AddedToken', content: '<|endoftext|>' } };
  assert.equal(loadHfTokenizer(tinyQwenTokenizer(), objectConfig).eosId, 261);
  assert.equal(loadHfTokenizer(tinyQwenTokenizer(), {}, { eosToken: '<|im_end|>' }).padId, 263);
  assert.throws(
    () => loadHfTokenizer(tinyQwenTokenizer(), {}),
    (e: unknown) => e instanceof ConfigError && e.field === 'eos_token',
  );
  assert.throws(
    () => loadHfTokenizer(tinyQwenTokenizer(), { eos_token: '<nope>' }),
    /"<nope>" is not in the vocabulary/,
  );
});

test('saves its files and loads back through loadTokenizer', () => {
  const tok = loadHfTokenizer(tinyQwenTokenizer(), {}, { eosToken: '<|im_end|>' });
  const again = loadTokenizer(tok.toFiles());
  assert.deepEqual(again.encode('<|im_start|>hello world'), tok.encode('<|im_start|>hello world'));
  assert.equal(again.eosId, 263);
});

test('a StopMatcher finds a stop string across byte-level tokens', () => {
  const tok = loadHfTokenizer(tinyQwenTokenizer(), CONFIG);
  const m = new StopMatcher({ stopStrings: ['😀 w'], batchSize: 1, decode: (ids) => tok.decode(ids) });
  const ids = tok.encode('hello 😀 world');
  const results = ids.map((id) => m.push(0, id));
  assert.equal(results.indexOf('😀 w'), ids.indexOf(260)); // completed by the 'Ġw' token
  assert.equal(results.filter((r) => r === null).length, ids.indexOf(260));
});
