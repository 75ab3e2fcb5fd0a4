import { test } from 'node:test';
import assert from 'node:assert/strict';
import { toolCallEvents } from '../../../src/tools/events.ts';

test('tool calls become event records: code as written, arguments as canonical JSON', () => {
  assert.deepEqual(
    toolCallEvents([
      { kind: 'code', name: 'js', arguments: { code: 'console.log(1)' }, executed: true, ok: true, shown: '1' },
      {
        kind: 'function',
        name: 'f',
        arguments: { b: 2, a: 1 },
        executed: true,
        ok: false,
        shown: 'missing argument "c"',
      },
      {
        kind: 'invalid',
        name: '',
        arguments: null,
        executed: true,
        ok: false,
        shown: 'invalid tool call: not valid JSON',
      },
      { kind: 'code', name: 'js', arguments: { code: 'console.log(2)' }, executed: false, ok: false, shown: '' },
    ]),
    [
      { name: 'js', input: 'console.log(1)', output: '1', ok: true, executed: true },
      { name: 'f', input: '{"a":1,"b":2}', output: 'missing argument "c"', ok: false, executed: true },
      { name: '', input: '', output: 'invalid tool call: not valid JSON', ok: false, executed: true },
      { name: 'js', input: 'console.log(2)', output: '', ok: false, executed: false },
    ],
  );
  assert.deepEqual(toolCallEvents(undefined), []);
});
