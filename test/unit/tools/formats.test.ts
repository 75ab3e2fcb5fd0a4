import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TOOL_FORMATS, checkFormatForChat, parseFunctionCall, toolFormat } from '../../../src/tools/formats.ts';
import { ConfigError } from '../../../src/errors.ts';

const fence = TOOL_FORMATS['code-fence'];
const inline = TOOL_FORMATS['code-inline'];
const fn = TOOL_FORMATS['function-call'];

test('code-fence finds the js block the text ends with, with its span', () => {
  const text = 'Let me see.\n```javascript\nconst a = 2n;\nconsole.log(a ** 10n)\n```\n';
  assert.deepEqual(fence.lastCall(text), {
    start: 12,
    end: text.length,
    call: { kind: 'code', language: 'javascript', code: 'const a = 2n;\nconsole.log(a ** 10n)' },
  });
});

test('code-fence finds no call at an untagged fence, a python block or a bare closing fence', () => {
  assert.equal(fence.lastCall('intro\n```\n'), null);
  assert.equal(fence.lastCall('```python\nprint(1)\n```\n'), null);
  assert.equal(fence.lastCall('```\nfoo\n```\n'), null);
  assert.equal(fence.lastCall('no fence at all\n```\n'), null);
});

test('code-fence takes the last js block when earlier untagged blocks precede it', () => {
  const found = fence.lastCall('```\nnote\n```\n```js\nx\n```\n');
  assert.deepEqual(found?.call, { kind: 'code', language: 'js', code: 'x' });
  assert.equal(found?.start, 13);
});

test('code-inline pairs the last two fences and needs a js tag and a space', () => {
  assert.equal(inline.lastCall('```'), null);
  assert.equal(inline.lastCall('a ```js'), null);
  assert.deepEqual(inline.lastCall('x```js console.log(1) ```')?.call, {
    kind: 'code',
    language: 'js',
    code: 'console.log(1)',
  });
  assert.equal(inline.lastCall('```jsconsole.log(1)```'), null);
  assert.equal(inline.lastCall('```py print(1)```'), null);
});

test('function-call parses name and arguments; missing arguments mean {}', () => {
  assert.deepEqual(fn.lastCall('<think>x</think><tool_call> {"name":"f","arguments":{"a":1}} </tool_call>'), {
    start: 16,
    end: 73,
    call: { kind: 'function', name: 'f', arguments: { a: 1 } },
  });
  assert.deepEqual(parseFunctionCall('{"name":"g"}'), { kind: 'function', name: 'g', arguments: {} });
});

test('function-call reports unparsable calls with a reason and ignores a stray closing tag', () => {
  assert.deepEqual(parseFunctionCall('{"name":1}'), { kind: 'invalid', raw: '{"name":1}', reason: 'no "name" string' });
  assert.deepEqual(parseFunctionCall('[1]'), { kind: 'invalid', raw: '[1]', reason: 'not a JSON object' });
  assert.equal(parseFunctionCall('{"name":"f","arguments":[1]}').kind, 'invalid');
  assert.equal(parseFunctionCall('{name: f}').kind, 'invalid');
  assert.equal(fn.lastCall('text</tool_call>'), null);
});

test('formats write calls that they parse back', () => {
  const code = { kind: 'code', language: 'js', code: 'console.log(7)' } as const;
  const call = { kind: 'function', name: 'search_books', arguments: { author: 'Ann Lee' } } as const;
  assert.deepEqual(fence.lastCall(fence.writeCall(code))?.call, code);
  assert.deepEqual(inline.lastCall(inline.writeCall(code))?.call, code);
  assert.deepEqual(fn.lastCall(fn.writeCall(call))?.call, call);
  assert.equal(fence.wrapResult('42'), '```output\n42\n```\n');
  assert.equal(inline.wrapResult('42'), '```output 42```');
  assert.equal(fn.wrapResult('{}'), '<tool_response>{}</tool_response>');
});

test('a multi-line fence is refused where a newline ends the turn; unknown formats are config errors', () => {
  assert.throws(() => checkFormatForChat(fence, '\n'), ConfigError);
  checkFormatForChat(inline, '\n');
  checkFormatForChat(fence, '<|im_end|>');
  assert.throws(() => toolFormat('python'), /unknown tool format "python"/);
});

test('a call nested deeper than 32 levels is an invalid call, found without parsing it', () => {
  const deep = (n: number) => `{"name":"f","arguments":{"a":${'['.repeat(n)}${']'.repeat(n)}}}`;
  assert.equal(parseFunctionCall(deep(30)).kind, 'function');
  const reason = 'JSON nests deeper than 32 levels';
  assert.deepEqual(parseFunctionCall(deep(31)), { kind: 'invalid', raw: deep(31), reason });
  const inString = '{"name":"f","arguments":{"s":"[[[[{{{{\\"[[[["}}';
  assert.equal(parseFunctionCall(inString).kind, 'function', 'brackets in strings do not count');
});
