import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateWithTools, roundSeed, type ToolTurnOptions } from '../../../src/tools/protocol.ts';
import { TOOL_FORMATS, type ToolFormatName } from '../../../src/tools/formats.ts';
import { toolCallEvents } from '../../../src/tools/events.ts';
import type { TextTokenizer } from '../../../src/agent/types.ts';
import type { ToolCall, ToolExecutor } from '../../../src/tools/types.ts';
import type { ToolResult } from '../../../src/envs/tool-provider.ts';
import { charTokenizer } from '../agent/char-tokenizer.ts';
import { scriptedBackend, streamingBackend } from './scripted.ts';

const STOP = '<|im_end|>';

/** An executor answering from a table keyed by the code / function name; records what it ran. */
function tableExecutor(table: Record<string, ToolResult>): ToolExecutor & { ran: ToolCall[] } {
  const ran: ToolCall[] = [];
  return {
    ran,
    async execute(call) {
      ran.push(call);
      const key = call.kind === 'code' ? call.code : call.kind === 'function' ? call.name : '';
      return table[key] ?? { ok: false, output: '', error: 'no such entry' };
    },
  };
}

async function play(
  scripts: Record<string, string>,
  executors: ToolExecutor[],
  options: Partial<ToolTurnOptions> = {},
  maxNewTokens = 200,
) {
  const tokenizer = charTokenizer();
  const backend = scriptedBackend(tokenizer, new Map(Object.entries(scripts)));
  const prompts = Object.keys(scripts).map((p) => tokenizer.encode(p));
  const rows = await generateWithTools(
    (r) => backend.generate(r),
    {
      prompts,
      maxNewTokens,
      rowSeeds: prompts.map((_, i) => 100 + i),
      stopStrings: [STOP],
    },
    executors,
    tokenizer,
    { format: TOOL_FORMATS['code-fence'], maxCalls: 2, ...options },
  );
  return { rows, backend, tokenizer };
}

/** '1' per model-written char, '0' per template char: the expected mask of a char-level tokenizer. */
const ones = (s: string) => '1'.repeat(s.length);
const zeros = (s: string) => '0'.repeat(s.length);

test('a code call pauses generation, its output is appended with mask 0 and generation resumes', async () => {
  const before = 'Compute.\n```js\nconsole.log(6*7)\n```\n';
  const after = 'So \\boxed{42}.' + STOP;
  const exec = tableExecutor({ 'console.log(6*7)': { ok: true, output: '42\n' } });
  const { rows } = await play({ 'Q1:': before + after }, [exec]);
  const r = rows[0];
  const block = '```output\n42\n```\n';
  assert.equal(r.text, before + block + after);
  assert.equal(r.mask.join(''), ones(before) + zeros(block) + ones(after));
  assert.deepEqual(exec.ran, [{ kind: 'code', language: 'js', code: 'console.log(6*7)' }]);
  assert.equal(r.finishReason, 'stop');
  assert.equal(r.rounds, 2);
  assert.equal(r.modelText, before + 'So \\boxed{42}.');
  assert.equal(r.answerText, 'Compute.\nSo \\boxed{42}.');
  assert.deepEqual(r.calls, [
    { kind: 'code', name: 'js', arguments: { code: 'console.log(6*7)' }, executed: true, ok: true, shown: '42' },
  ]);
});

test('log-probs follow the model-written tokens across rounds and are 0 on tool tokens', async () => {
  const before = '```js\nx\n```\n';
  const exec = tableExecutor({ x: { ok: true, output: '1' } });
  const { rows } = await play({ 'Q:': before + 'A' + STOP }, [exec]);
  const written = rows[0].logprobs.filter((_, i) => rows[0].mask[i] === 1);
  assert.deepEqual(
    written,
    Array.from({ length: before.length + 1 + STOP.length }, (_, k) => -(k + 1) / 100),
  );
  assert.ok(rows[0].logprobs.every((lp, i) => rows[0].mask[i] === 1 || lp === 0));
});

test('a turn without calls is one round with the request seed and the plain generation', async () => {
  const { rows, backend } = await play({ 'Q:': 'just \\boxed{3}' + STOP }, [tableExecutor({})]);
  assert.equal(rows[0].text, 'just \\boxed{3}' + STOP);
  assert.equal(rows[0].mask.join(''), ones('just \\boxed{3}' + STOP));
  assert.equal(backend.requests.length, 1);
  assert.deepEqual(backend.requests[0].rowSeeds, [100]);
  assert.deepEqual(backend.requests[0].stopStrings, [STOP, '\n```\n']);
  assert.deepEqual(rows[0].calls, []);
});

test('past the call limit code is not run and, with the notice on, one notice is appended', async () => {
  const call = (n: number) => `\`\`\`js\nc${n}\n\`\`\`\n`;
  const script = call(1) + call(2) + call(3) + 'done' + STOP;
  const table = { c1: { ok: true, output: 'one' }, c2: { ok: true, output: 'two' }, c3: { ok: true, output: 'three' } };
  const quiet = tableExecutor(table);
  const {
    rows: [q],
  } = await play({ 'Q:': script }, [quiet], { maxCalls: 1 });
  assert.deepEqual(
    quiet.ran.map((c) => (c.kind === 'code' ? c.code : '')),
    ['c1'],
  );
  assert.equal(q.text, call(1) + '```output\none\n```\n' + call(2) + call(3) + 'done' + STOP);
  assert.deepEqual(
    q.calls.map((c) => [c.executed, c.shown]),
    [
      [true, 'one'],
      [false, ''],
      [false, ''],
    ],
  );
  const {
    rows: [n],
  } = await play({ 'Q:': script }, [tableExecutor(table)], { maxCalls: 1, limitNotice: true });
  const notice = '```output\ntool call limit reached (1 per response); the call was not run\n```\n';
  assert.equal(n.text, call(1) + '```output\none\n```\n' + call(2) + notice + call(3) + 'done' + STOP);
});

test('errors show their last line and long outputs keep 128 characters at each end', async () => {
  const long = 'a'.repeat(100) + 'b'.repeat(200) + 'c'.repeat(100);
  const exec = tableExecutor({
    bad: { ok: false, output: 'partial', error: 'Traceback\n  at line 1\nTypeError: x is not a function\n' },
    big: { ok: true, output: long },
  });
  const {
    rows: [r],
  } = await play({ 'Q:': '```js\nbad\n```\n```js\nbig\n```\nend' + STOP }, [exec]);
  assert.equal(r.calls[0].shown, 'TypeError: x is not a function');
  assert.equal(r.calls[0].ok, false);
  assert.equal(r.calls[1].shown, 'a'.repeat(100) + 'b'.repeat(28) + '...' + 'b'.repeat(28) + 'c'.repeat(100));
});

test('function calls: several per turn, each answered in a tool_response, a bad one fails as a call', async () => {
  const c1 = '<tool_call>{"name":"find_user","arguments":{"name":"Ann"}}</tool_call>';
  const c2 = '<tool_call>{"name": oops}</tool_call>';
  const final = '<answer>2</answer>' + STOP;
  const exec = tableExecutor({ find_user: { ok: true, output: '{"user_id":"U1"}' } });
  const {
    rows: [r],
  } = await play({ 'Q:': c1 + c2 + final }, [exec], { format: TOOL_FORMATS['function-call'] });
  const resp1 = '<tool_response>{"user_id":"U1"}</tool_response>';
  const resp2 = '<tool_response>invalid tool call: not valid JSON</tool_response>';
  assert.equal(r.text, c1 + resp1 + c2 + resp2 + final);
  assert.equal(r.mask.join(''), ones(c1) + zeros(resp1) + ones(c2) + zeros(resp2) + ones(final));
  assert.deepEqual(
    r.calls.map((c) => [c.kind, c.name, c.ok]),
    [
      ['function', 'find_user', true],
      ['invalid', '', false],
    ],
  );
  assert.equal(r.answerText, '<answer>2</answer>');
  assert.equal(exec.ran.length, 1);
});

test('a call that uses up the token budget is not run, so the turn ends on a model token', async () => {
  const call = '```js\nx\n```\n';
  const exec = tableExecutor({ x: { ok: true, output: '1' } });
  const {
    rows: [r],
  } = await play({ 'Q:': call + 'more' }, [exec], {}, call.length);
  assert.equal(r.text, call);
  assert.equal(r.finishReason, 'length');
  assert.deepEqual(r.mask, new Array(call.length).fill(1));
  assert.deepEqual(exec.ran, []);
  assert.equal(r.calls[0].executed, false);
});

test('a result that would overflow the context ends the turn instead of being appended', async () => {
  const call = '```js\nx\n```\n';
  const exec = tableExecutor({ x: { ok: true, output: 'z'.repeat(40) } });
  const {
    rows: [r],
  } = await play({ 'Q:': call + 'more' }, [exec], { maxContext: 2 + call.length + 30 });
  assert.equal(r.text, call);
  assert.equal(r.finishReason, 'length');
  assert.equal(r.calls[0].executed, true);
});

test('the inline format pauses at the opening fence too and resumes until the call closes', async () => {
  const script = '```js console.log(2n**64n)```\\boxed{18446744073709551616}\n';
  const exec = tableExecutor({ 'console.log(2n**64n)': { ok: true, output: '18446744073709551616\n' } });
  const tokenizer = charTokenizer();
  const backend = scriptedBackend(tokenizer, new Map([['>', script]]));
  const [r] = await generateWithTools(
    (q) => backend.generate(q),
    {
      prompts: [tokenizer.encode('>')],
      maxNewTokens: 100,
      rowSeeds: [7],
      stopStrings: ['\n'],
    },
    [exec],
    tokenizer,
    { format: TOOL_FORMATS['code-inline'], maxCalls: 1 },
  );
  assert.equal(r.text, '```js console.log(2n**64n)``````output 18446744073709551616```\\boxed{18446744073709551616}\n');
  assert.equal(r.rounds, 3);
  assert.deepEqual(
    backend.requests.map((q) => q.rowSeeds[0]),
    [7, roundSeed(7, 1), roundSeed(7, 2)],
  );
  assert.equal(r.answerText, '\\boxed{18446744073709551616}');
});

test('rows are batched per round: only rows still writing are asked again', async () => {
  const exec = tableExecutor({ x: { ok: true, output: '1' } });
  const { rows, backend } = await play({ 'A:': 'plain' + STOP, 'B:': '```js\nx\n```\nthen' + STOP }, [exec, exec]);
  assert.deepEqual(
    backend.requests.map((q) => q.prompts.length),
    [2, 1],
  );
  assert.equal(rows[0].text, 'plain' + STOP);
  assert.equal(rows[1].text, '```js\nx\n```\n```output\n1\n```\nthen' + STOP);
});

/** A char tokenizer that counts the ids it decodes: the protocol's own work per turn. */
function countingTokenizer(): TextTokenizer & { decoded: number } {
  const base = charTokenizer();
  const counting = { encode: base.encode, decoded: 0, decode: (ids: readonly number[]) => base.decode(ids) };
  counting.decode = (ids) => {
    counting.decoded += ids.length;
    return base.decode(ids);
  };
  return counting;
}

async function playStreaming(script: string, format: ToolFormatName, maxCalls: number) {
  const tokenizer = countingTokenizer();
  const exec = tableExecutor({});
  const [row] = await generateWithTools(
    streamingBackend(tokenizer, script),
    {
      prompts: [tokenizer.encode('Q:')],
      maxNewTokens: 10 * script.length,
      rowSeeds: [1],
      stopStrings: [STOP],
    },
    [exec],
    tokenizer,
    { format: TOOL_FORMATS[format], maxCalls },
  );
  return { row: row!, decodedPerChar: tokenizer.decoded / script.length };
}

test('a turn of thousands of calls and false pauses decodes each token a bounded number of times', async () => {
  const fn = '<tool_call>{"name":"f","arguments":{}}</tool_call>';
  const many = await playStreaming(fn.repeat(3000) + '</tool_call>'.repeat(3000) + 'end' + STOP, 'function-call', 4);
  assert.equal(many.row.calls.length, 3000);
  assert.ok(many.decodedPerChar < 8, `decoded ${many.decodedPerChar} ids per char written`);
  const inline = await playStreaming('```js 1```'.repeat(3000) + 'end' + STOP, 'code-inline', 2);
  assert.equal(inline.row.calls.filter((c) => c.executed).length, 2);
  assert.ok(inline.decodedPerChar < 8, `decoded ${inline.decodedPerChar} ids per char written`);
});

test('a call nested 4,000 levels deep is a failed call and its turn converts to events', async () => {
  const deep = `<tool_call>{"name":"f","arguments":{"a":${'['.repeat(4000)}${']'.repeat(4000)}}}</tool_call>`;
  const { row } = await playStreaming(deep + 'done' + STOP, 'function-call', 4);
  const shown = 'invalid tool call: JSON nests deeper than 32 levels';
  assert.deepEqual(
    row.calls.map((c) => [c.kind, c.shown]),
    [['invalid', shown]],
  );
  assert.deepEqual(toolCallEvents(row.calls), [
    { name: '', input: '', output: 'invalid tool call: JSON nests deeper than 32 levels', ok: false, executed: true },
  ]);
});
