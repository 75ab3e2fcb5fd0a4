import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Tokenizer as HfLibTokenizer } from '@huggingface/tokenizers';
import { ConfigError } from '../../../src/errors.ts';
import { createCharTokenizer } from '../../../src/policy/tokenizer/char.ts';
import { loadTokenizer } from '../../../src/policy/tokenizer/load.ts';

const PROTOCOL = ['<think>', '</think>', '<answer>', '</answer>', '||'];
const tok = createCharTokenizer({ characters: 'ab 0123456789+=\n😀', tokens: PROTOCOL });

test('lays out control tokens, protocol tokens, then characters', () => {
  assert.deepEqual([tok.padId, tok.eosId, tok.unkId, tok.bosId], [0, 1, 2, null]);
  assert.deepEqual(
    PROTOCOL.map((t) => tok.tokenToId(t)),
    [3, 4, 5, 6, 7],
  );
  assert.equal(tok.tokenToId('a'), 8);
  assert.equal(tok.vocabSize, 8 + 17);
  assert.deepEqual(
    [...tok.specialTokens],
    [
      ['<pad>', 0],
      ['<eos>', 1],
      ['<unk>', 2],
    ],
  );
});

test('encodes protocol tokens as single ids and round-trips', () => {
  const text = '<think>1+1</think><answer>2||a</answer>';
  const ids = tok.encode(text);
  assert.deepEqual(ids.slice(0, 5), [3, tok.tokenToId('1'), tok.tokenToId('+'), tok.tokenToId('1'), 4]);
  assert.equal(ids.length, 10);
  assert.equal(tok.decode(ids), text);
});

test('maps unknown characters to <unk>, astral characters to one id', () => {
  assert.deepEqual(tok.encode('a?😀|'), [8, 2, tok.tokenToId('😀'), 2]);
  assert.equal(tok.decode(tok.encode('😀\n')), '😀\n');
});

test('prefers the longest multi-character token', () => {
  const t = createCharTokenizer({ characters: 'ab<', tokens: ['<a', '<ab'] });
  assert.deepEqual(t.encode('<ab<a<'), [t.tokenToId('<ab'), t.tokenToId('<a'), t.tokenToId('<')]);
});

test('decode can skip control tokens but keeps protocol tokens', () => {
  assert.equal(tok.decode([3, 8, 4, 1, 0, 0], { skipSpecialTokens: true }), '<think>a</think>');
  assert.equal(tok.decode([8, 1]), 'a<eos>');
  assert.throws(() => tok.decode([999]), /token id 999 is outside the vocabulary of 25/);
});

test('refuses bad alphabets, naming the field', () => {
  assert.throws(
    () => createCharTokenizer({ characters: ['a', 'bc'] }),
    (e: unknown) => e instanceof ConfigError && e.field === 'tokenizer.characters',
  );
  assert.throws(() => createCharTokenizer({ characters: 'aa' }), /"a" appears twice/);
  assert.throws(() => createCharTokenizer({ characters: 'a', tokens: ['<eos>'] }), /"<eos>" appears twice/);
});

test('saves as an HF tokenizer.json pair and loads back identically', () => {
  const files = tok.toFiles();
  const again = loadTokenizer(files);
  const text = '<think>ab 12</think> ? <answer>3</answer><eos>';
  assert.deepEqual(again.encode(text), tok.encode(text));
  assert.deepEqual([again.padId, again.eosId, again.unkId, again.vocabSize], [0, 1, 2, 25]);
  assert.deepEqual(again.toFiles(), files);
});

test('the saved tokenizer.json encodes the same under the Hugging Face implementation', () => {
  const files = tok.toFiles();
  const hf = new HfLibTokenizer(JSON.parse(files['tokenizer.json']), JSON.parse(files['tokenizer_config.json']));
  const text = '<think>a 1</think>\n<answer>2||😀</answer>';
  assert.deepEqual(hf.encode(text).ids, tok.encode(text));
  assert.equal(hf.decode(tok.encode(text)), text);
});
