import { test } from 'node:test';
import assert from 'node:assert/strict';
import { extractAnswer, extractThinkAnswer, parseResponse, type AnswerStyle } from '../../../src/agent/parse.ts';
import { Prng } from '../../../src/envs/prng.ts';

const MOVES = new Map(['Up', 'Down', 'Left', 'Right'].map((m) => [m.toLowerCase(), m]));
const ALIASES = new Map([
  ['u', 'Up'],
  ['d', 'Down'],
  ['l', 'Left'],
  ['r', 'Right'],
]);
const match = (piece: string): string | null => MOVES.get(piece.toLowerCase()) ?? null;
const matchCompact = (piece: string): string | null => ALIASES.get(piece.toLowerCase()) ?? null;

function parse(text: string, style: AnswerStyle = 'think', maxActions = 3) {
  const r = parseResponse(text, {
    style,
    separator: style === 'line' ? '|' : '||',
    maxActions,
    match: style === 'line' ? matchCompact : match,
  });
  return { actions: r.actions, unknown: r.unknown, penalty: r.formatError };
}

// [response, expected actions, expected dropped pieces, format penalty]
const THINK_CASES: Array<[string, string[], string[], boolean]> = [
  ['<think>go</think><answer>Up || Left</answer>', ['Up', 'Left'], [], false],
  ['<think>a</think>\n <answer> up ||  RIGHT </answer>', ['Up', 'Right'], [], false],
  ['<answer>Up</answer>', [], [], true],
  ['<think>x</think><answer>Up || Jump || Down</answer>', ['Up', 'Down'], ['Jump'], true],
  ['<think>x</think><answer>Up || Up || Up || Up || Left</answer>', ['Up', 'Up', 'Up'], [], false],
  ['<think>x</think><answer>Up || Jump || Up || Left</answer>', ['Up', 'Up'], ['Jump'], true],
  ['<think>x</think><answer> ||  || </answer>', [], [], true],
  ['<think><think>x</think></think><answer>Down</answer>', ['Down'], [], false],
  ['<think>x</think>so<answer>Up</answer>', [], [], true],
  ['<think>a</think><answer>Up</answer><think>b</think><answer>Down</answer>', ['Up'], [], false],
  ['<think>a</think><answer>Up', [], [], true],
  ['<think>a</think><answer>Up || Left</answer', [], [], true],
  ['<think>a</think><answer>Up ||Left||Down</answer>', ['Up', 'Left', 'Down'], [], false],
  ['<think>a</think><answer>Up\u0000 || \uD800Left</answer>', [], ['Up\u0000', '\uD800Left'], true],
  ['<THINK>a</THINK><ANSWER>Up</ANSWER>', [], [], true],
  ['<think>a</think><answer>Up|Left</answer>', [], ['Up|Left'], true],
  ['<think>a</think> x </think>\t<answer>Left</answer>', ['Left'], [], false],
];

test('think template: a table of tricky responses', () => {
  for (const [text, actions, unknown, penalty] of THINK_CASES) {
    assert.deepEqual(parse(text), { actions, unknown, penalty }, JSON.stringify(text));
  }
});

test('no-think template: the first answer block, think optional', () => {
  assert.deepEqual(parse('<answer>left</answer>', 'answer'), { actions: ['Left'], unknown: [], penalty: false });
  assert.deepEqual(parse('<think>x</think><answer>Up</answer><answer>Down</answer>', 'answer').actions, ['Up']);
  assert.deepEqual(parse('Left', 'answer'), { actions: [], unknown: [], penalty: true });
});

test('compact template: one line, "|" separated aliases', () => {
  assert.deepEqual(parse('R|R|U\nignored', 'line'), { actions: ['Right', 'Right', 'Up'], unknown: [], penalty: false });
  assert.deepEqual(parse('r||u', 'line'), { actions: ['Right', 'Up'], unknown: [], penalty: false });
  assert.deepEqual(parse('X|R', 'line'), { actions: ['Right'], unknown: ['X'], penalty: true });
  assert.deepEqual(parse('', 'line'), { actions: [], unknown: [], penalty: true });
});

test('only a bounded prefix is parsed', () => {
  const answer = '<think>a</think><answer>Up</answer>';
  assert.deepEqual(parse(answer + 'z'.repeat(10_000_000)).actions, ['Up']);
  assert.deepEqual(parse('z'.repeat(70_000) + answer).actions, []);
});

const FRAGMENTS = [
  '<think>',
  '</think>',
  '<answer>',
  '</answer>',
  ' ',
  '\n',
  '\t',
  'Up',
  'x',
  '<',
  '>',
  '/',
  '||',
  '\u2028',
];

function randomText(rng: Prng, pieces: number, fragments: readonly string[]): string {
  let out = '';
  for (let i = 0; i < pieces; i++) out += rng.pick(fragments);
  return out;
}

test('the linear extractors agree with the regexes of docs/spec.md §3 (5000 seeded random strings)', () => {
  const rng = new Prng(11);
  const think = /<think>(.*?)<\/think>\s*<answer>(.*?)<\/answer>/s;
  const answer = /<answer>(.*?)<\/answer>/s;
  for (let i = 0; i < 5000; i++) {
    const text = randomText(rng, rng.range(0, 16), FRAGMENTS);
    const m = think.exec(text);
    assert.deepEqual(extractThinkAnswer(text), m ? { think: m[1], answer: m[2] } : null, JSON.stringify(text));
    assert.equal(extractAnswer(text), answer.exec(text)?.[1] ?? null, JSON.stringify(text));
  }
});

function hostileText(rng: Prng): string {
  const kind = rng.int(4);
  if (kind === 0) return String.fromCharCode(...Array.from({ length: rng.range(0, 200) }, () => rng.int(0x10000)));
  if (kind === 1)
    return randomText(rng, rng.range(0, 300), [...FRAGMENTS, '\uD800', '\uDFFF', '\u0000', '\u001b[2J', '🙂']);
  if (kind === 2) return '<think>'.repeat(rng.range(1, 5000)) + '</think>'.repeat(rng.range(0, 5000)) + '<answer>';
  return '<think>' + 'Up || '.repeat(rng.range(1, 200_000)) + '</think> <answer>' + ' || '.repeat(rng.range(0, 20_000));
}

test('parsing never throws on hostile input (3000 seeded strings, some megabytes long)', () => {
  const rng = new Prng(12);
  for (let i = 0; i < 3000; i++) {
    const text = hostileText(rng);
    for (const style of ['think', 'answer', 'line'] as const) {
      const r = parseResponse(text, { style, separator: '||', maxActions: 5, match });
      assert.ok(Array.isArray(r.actions) && r.actions.length <= 5);
    }
  }
});

test('a throwing matcher or a non-string input is a format failure, not an exception', () => {
  const boom = (): string => {
    throw new Error('boom');
  };
  const r = parseResponse('<answer>Up</answer>', { style: 'answer', separator: '||', maxActions: 1, match: boom });
  assert.deepEqual([r.actions, r.formatError], [[], true]);
  const n = parseResponse(null as unknown as string, { style: 'answer', separator: '||', maxActions: 1, match });
  assert.equal(n.formatError, true);
});
