import { test } from 'node:test';
import assert from 'node:assert/strict';
import { StopMatcher } from '../../../src/policy/sampling/stop.ts';
import { createCharTokenizer } from '../../../src/policy/tokenizer/char.ts';

const chars = createCharTokenizer({ characters: 'abc/<>nswer 😀', tokens: ['<answer>'] });

function pushAll(m: StopMatcher, seq: number, ids: number[]): (string | null)[] {
  return ids.map((id) => m.push(seq, id));
}

test('matches a stop string spelled over many tokens at the token that completes it', () => {
  const m = new StopMatcher({ stopStrings: ['</answer>'], batchSize: 1, decode: (ids) => chars.decode(ids) });
  const results = pushAll(m, 0, chars.encode('<answer>abc</answer>'));
  assert.deepEqual(
    results.slice(0, -1).filter((r) => r !== null),
    [],
  );
  assert.equal(results.at(-1), '</answer>');
  assert.equal(m.matched(0), '</answer>');
});

test('matches across multi-character tokens and reports which stop string', () => {
  const m = new StopMatcher({ stopStrings: ['xyz', 'r <an'], batchSize: 1, decode: (ids) => chars.decode(ids) });
  assert.deepEqual(pushAll(m, 0, chars.encode('answer <answer>')), [...new Array(7).fill(null), 'r <an']);
});

test('waits for all bytes of a character split over byte tokens', () => {
  // Byte-level decoding as a BPE decoder does it: ids are bytes, text is their UTF-8 decoding.
  const decode = (ids: readonly number[]) => Buffer.from(ids).toString('utf8');
  const m = new StopMatcher({ stopStrings: ['😀!'], batchSize: 1, decode });
  assert.deepEqual(pushAll(m, 0, [...Buffer.from('a😀😀!')]), [
    null,
    null,
    null,
    null,
    null,
    null,
    null,
    null,
    null,
    '😀!',
  ]);
});

test('keeps sequences of a batch apart and forgets one on reset', () => {
  const m = new StopMatcher({ stopStrings: ['ab'], batchSize: 2, decode: (ids) => chars.decode(ids) });
  const [a, b] = chars.encode('ab');
  assert.equal(m.push(0, a), null);
  assert.equal(m.push(1, b), null);
  assert.equal(m.push(0, b), 'ab');
  assert.equal(m.push(1, b), null);
  m.reset(0);
  assert.equal(m.matched(0), null);
  assert.throws(() => m.push(2, a), /sequence 2 is outside the batch of 2/);
});

test('decodes only a short window however long the sequence', () => {
  let longest = 0;
  const decode = (ids: readonly number[]) => ((longest = Math.max(longest, ids.length)), chars.decode(ids));
  const m = new StopMatcher({ stopStrings: ['</answer>'], batchSize: 1, decode, contextTokens: 3 });
  pushAll(m, 0, chars.encode('abc '.repeat(500)));
  assert.equal(longest, 4);
  assert.equal(m.matched(0), null);
});

test('with no stop strings nothing ever matches', () => {
  const m = new StopMatcher({ stopStrings: [], batchSize: 1, decode: (ids) => chars.decode(ids) });
  assert.deepEqual(pushAll(m, 0, chars.encode('ab')), [null, null]);
});
