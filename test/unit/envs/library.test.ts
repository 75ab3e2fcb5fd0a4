import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  LIBRARY,
  LibraryEnv,
  callLibraryTool,
  libraryTask,
  normalizeAnswer,
  type LibraryConfig,
} from '../../../src/envs/library/index.ts';
import { resolveEnvConfig } from '../../../src/envs/registry.ts';
import { Episode, TEMPLATES } from '../../../src/agent/index.ts';
import { isToolProvider } from '../../../src/envs/tool-provider.ts';
import { executorForEnv } from '../../../src/tools/executors.ts';

const config = LIBRARY.defaults;

test('a seed gives the same database and questions twice', () => {
  assert.deepEqual(libraryTask(config, 9), libraryTask(config, 9));
  assert.notDeepEqual(libraryTask(config, 9).db, libraryTask(config, 10).db);
});

test('seed 0 asks three questions about one user, with ground-truth calls and answers', () => {
  const { questions } = libraryTask(config, 0);
  assert.deepEqual(
    questions.map((q) => [q.question, q.expectedCalls.map((c) => c.name), q.answer]),
    [
      ['How many books does Ivo Kim have borrowed?', ['find_user', 'get_borrowed_books'], '2'],
      [
        'What late fee, in cents, does Ivo Kim owe if all the books are returned today (day 100)?',
        ['compute_late_fee', 'compute_late_fee'],
        '125',
      ],
      [
        'What is the oldest book in the library by the author of "The Distant Harbor"?',
        ['get_book', 'search_books'],
        'The Bright Tower',
      ],
    ],
  );
  assert.deepEqual(questions[1].expectedCalls[0].arguments, { due_day: 95, return_day: 100 });
});

test('the tools answer from the database: user lookup, loans, late fee', () => {
  const { db } = libraryTask(config, 0);
  assert.deepEqual(callLibraryTool(db, 'find_user', { name: 'ivo kim' }), {
    ok: true,
    output: '{"user_id":"U5","name":"Ivo Kim"}',
  });
  assert.deepEqual(callLibraryTool(db, 'compute_late_fee', { due_day: 95, return_day: 100 }), {
    ok: true,
    output: '{"days_late":5,"fee_cents":125}',
  });
  assert.deepEqual(callLibraryTool(db, 'compute_late_fee', { due_day: 113, return_day: 100 }), {
    ok: true,
    output: '{"days_late":0,"fee_cents":0}',
  });
  assert.equal(JSON.parse(callLibraryTool(db, 'get_borrowed_books', { user_id: 'U5' }).output).length, 2);
});

test('bad calls fail with a message naming the problem', () => {
  const { db } = libraryTask(config, 0);
  const error = (name: string, args: Record<string, never> | Record<string, unknown>) =>
    callLibraryTool(db, name, args as never).error;
  assert.equal(error('find_user', {}), 'missing argument "name"');
  assert.equal(error('find_user', { name: 'Ivo Kim', age: 3 }), 'unexpected argument "age"');
  assert.equal(error('compute_late_fee', { due_day: '95', return_day: 100 }), 'argument "due_day" must be an integer');
  assert.equal(error('find_user', { name: 'Nobody' }), 'no user named "Nobody"');
  assert.equal(error('delete_book', {}), 'unknown tool "delete_book"');
});

test('running the ground-truth calls yields the ground-truth answers on many seeds', () => {
  for (let seed = 0; seed < 30; seed++) {
    const { db, questions } = libraryTask(config, seed);
    const run = (c: { name: string; arguments: Parameters<typeof callLibraryTool>[2] }) =>
      JSON.parse(callLibraryTool(db, c.name, c.arguments).output);
    const results = questions.map((q) => q.expectedCalls.map(run));
    assert.equal(String(results[0][1].length), questions[0].answer, `seed ${seed} count`);
    const fees = results[1].reduce((s: number, r: { fee_cents: number }) => s + r.fee_cents, 0);
    assert.equal(String(fees), questions[1].answer);
    const books = results[2][1] as { title: string; year: number }[];
    assert.equal(books.reduce((a, b) => (b.year < a.year ? b : a)).title, questions[2].answer, `seed ${seed} oldest`);
  }
});

test('answers are compared after normalising case, quotes, spaces, a period and \\boxed{}', () => {
  assert.equal(normalizeAnswer('  "The  Bright Tower". '), 'the bright tower');
  assert.equal(normalizeAnswer('\\boxed{125}'), '125');
});

test('an episode pays 1 per right answer and succeeds only when all are right', () => {
  const env = new LibraryEnv(config);
  env.reset(0);
  assert.deepEqual([env.step('2').reward, env.done], [1, false]);
  assert.match(env.render(), /^Today is day 100\.\nQ2\/3: What late fee/);
  assert.equal(env.step('124').reward, 0);
  const last = env.step('the bright tower');
  assert.deepEqual([last.reward, last.done, env.success], [1, true, false]);
  assert.throws(() => env.step('x'));
});

test('the expert answers every turn of a full-template episode correctly', () => {
  const c = resolveEnvConfig('library') as LibraryConfig;
  const episode = new Episode(new LibraryEnv(c), c, TEMPLATES.full);
  episode.start(4);
  while (!episode.done) {
    const [answer] = LIBRARY.expert!(c, episode.env.snapshot(), { turnsLeft: 1, actionsLeft: 1, maxActionsPerTurn: 1 });
    episode.respond(`<think>looked it up</think><answer>${answer}</answer>`);
  }
  assert.deepEqual([episode.success, episode.totalReward], [true, 3]);
});

test('the environment is a tool provider, and its executor routes function calls to it', async () => {
  const env = new LibraryEnv(config);
  env.reset(0);
  assert.equal(isToolProvider(env), true);
  assert.deepEqual(
    env.toolSchemas().map((t) => t.name),
    ['find_user', 'get_borrowed_books', 'search_books', 'get_book', 'compute_late_fee'],
  );
  const r = await executorForEnv(env).execute({ kind: 'function', name: 'get_book', arguments: { book_id: 'B01' } });
  assert.equal(JSON.parse(r.output).title, 'The Distant Harbor');
  const code = await executorForEnv(env).execute({ kind: 'code', language: 'js', code: '1' });
  assert.equal(code.error, 'no code interpreter in this environment');
});
