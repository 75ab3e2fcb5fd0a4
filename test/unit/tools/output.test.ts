import { test } from 'node:test';
import assert from 'node:assert/strict';
import { elide, lastLine, showResult } from '../../../src/tools/output.ts';

test('an error is shown as its last non-blank line', () => {
  const error = 'Traceback:\n  at f\nRangeError: too big\n\n';
  assert.equal(showResult({ ok: false, output: 'x', error }), 'RangeError: too big');
  assert.equal(lastLine(''), '');
});

test('a successful output loses trailing whitespace only', () => {
  assert.equal(showResult({ ok: true, output: '  1\n2\n\n' }), '  1\n2');
});

test('texts up to 2*keep characters stay whole; longer ones keep keep characters at each end', () => {
  assert.equal(elide('abcdef', 3), 'abcdef');
  assert.equal(elide('abcdefg', 3), 'abc...efg');
  assert.equal(elide('x'.repeat(256)), 'x'.repeat(256));
  assert.equal(elide('y'.repeat(300)), `${'y'.repeat(128)}...${'y'.repeat(128)}`);
});

test('a cut never splits a surrogate pair', () => {
  assert.equal(elide('ab😀cd😀ef', 3), 'ab😀...ef');
});
