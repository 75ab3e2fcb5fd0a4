import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RunCollector } from '../../../src/report/collect.ts';
import { auditTokens, runTokens, tokenPiece, type TokenizerLookup } from '../../../src/report/tokens.ts';
import { scratchTokenizer } from '../../../src/rl/vocabulary.ts';
import { realTokenizer } from '../agent/real-tokenizers.ts';
import { trajectory } from './fixtures.ts';

const noEnv = { env: null, legend: [], oracle: null };
const chars = scratchTokenizer();
const NEWLINE = chars.encode('\n')[0];
const scratch: TokenizerLookup = { tokenizer: chars, source: 'test', stopIds: [NEWLINE] };

/** A compact-template trajectory: user text, '\n' '>' (template), the answer with its stop, an observation. */
function logged(i: number, group = 0) {
  const parts: Array<[string, number]> = [
    ['Go', 2],
    ['\n>', 0],
    ['Right\n', 4],
    ['r1', 3],
    ['\n>', 0],
    ['Up', 4],
    ['\n', 0],
  ];
  const ids = parts.flatMap(([text]) => chars.encode(text));
  const roles = parts.map(([text, role]) => String(role).repeat(chars.encode(text).length)).join('');
  const t = trajectory(i, group, 0);
  return { ...t, tokenIds: ids, tokenRoles: roles, turns: [t.turns[0], { ...t.turns[0], response: 'Up' }] };
}

test('a token that is only part of a UTF-8 character is shown as its bytes, a whole one as its text', () => {
  const qwen = realTokenizer('qwen3');
  const [piece, rest, hello] = qwen.encode(' √ hello'); // √ is e2 88 9a, split over two tokens
  assert.deepEqual([tokenPiece(qwen, piece), tokenPiece(qwen, rest)], [{ bytes: '20 e2 88' }, { bytes: '9a' }]);
  assert.deepEqual(tokenPiece(qwen, hello), { text: ' hello' });
  const table = runTokens({ tokenizer: qwen, source: 'q', stopIds: [151645] }, [151644, 872, hello, 151644]);
  assert.deepEqual(table.text, { 151644: '<|im_start|>', 872: 'user', [hello]: ' hello' });
  assert.deepEqual(table.special, [151644]);
});

test("the audit counts tokens per role, loss only on assistant tokens, and finds each turn's span and stop", () => {
  const t = logged(1);
  const audit = auditTokens(t.tokenIds, t.tokenRoles, 2, [NEWLINE]);
  assert.deepEqual(audit.counts, [5, 0, 2, 2, 8, 0]);
  assert.equal(audit.loss, 8);
  assert.deepEqual(audit.responses, [
    { start: 4, end: 10, stop: true },
    { start: 14, end: 16, stop: false },
  ]);
  assert.deepEqual(audit.problems, []);
  assert.deepEqual(
    auditTokens(t.tokenIds, t.tokenRoles, 2, null).responses.map((r) => r.stop),
    [null, null],
  );
});

test("tool output inside a response belongs to its turn's span; a count that disagrees with the turns is a problem", () => {
  const audit = auditTokens([1, 2, 3, 4, 5, 6, 7], '0445440', 2, [6]);
  assert.deepEqual(audit.responses, [{ start: 1, end: 6, stop: true }]);
  assert.deepEqual(audit.problems, ['1 model-written span(s) for 2 turn(s)']);
  assert.deepEqual(auditTokens([1, 2], '09', 0, []).problems, ['unknown role digit(s) 9']);
});

test('the report carries ids and roles per shown trajectory and one text table holding exactly the ids they use', () => {
  const c = new RunCollector('r', { trajectoryIterations: 1 });
  const hidden = { ...logged(1), tokenIds: chars.encode('~~~'), tokenRoles: '222' };
  for (const e of [hidden, logged(2)]) c.add(e);
  assert.equal(c.needsTokenizer(), true);
  const report = c.finish(noEnv, scratch);
  const [t] = report.trajectories;
  assert.deepEqual([t.tokens!.ids, t.tokens!.roles], [logged(2).tokenIds, logged(2).tokenRoles]);
  assert.deepEqual(
    Object.keys(report.tokens.text)
      .map(Number)
      .sort((a, b) => a - b),
    [...new Set(logged(2).tokenIds)].sort((a, b) => a - b),
  );
  assert.equal(t.tokens!.ids.map((id) => report.tokens.text[id]).join(''), 'Go\n>Right\nr1\n>Up\n');
  assert.deepEqual([report.tokens.tokenizer, report.tokens.stop, report.tokens.note], ['test', [NEWLINE], null]);
});

test('events older than schema v4 give the "no token log" state and need no tokenizer', () => {
  const c = new RunCollector('r');
  c.add(trajectory(1, 0, 0));
  assert.equal(c.needsTokenizer(), false);
  const report = c.finish(noEnv, { note: 'no trajectory shown has a token log' });
  assert.equal(report.trajectories[0].tokens, null);
  assert.deepEqual(
    [report.tokens.text, report.tokens.tokenizer, report.tokens.note],
    [{}, null, 'no trajectory shown has a token log'],
  );
});
