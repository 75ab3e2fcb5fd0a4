import { test } from 'node:test';
import assert from 'node:assert/strict';
import { expertEpisode } from '../../../src/agent/expert.ts';
import { CountdownEnv, COUNTDOWN } from '../../../src/envs/countdown/index.ts';
import { evaluateExpression, sameMultiset } from '../../../src/envs/countdown/expression.ts';
import { generateCountdown } from '../../../src/envs/countdown/generate.ts';
import { solveCountdown } from '../../../src/envs/countdown/solver.ts';
import { Prng } from '../../../src/envs/prng.ts';

const value = (text: string): string | null => {
  const v = evaluateExpression(text).value;
  return v ? `${v.num}/${v.den}` : null;
};

test('expressions evaluate exactly, with precedence, unary minus and parentheses', () => {
  assert.deepEqual(['(3+5)*2', '3+5*2', '7/2*2', '-4+10', '1/3'].map(value), ['16/1', '13/1', '7/1', '6/1', '1/3']);
});

test('malformed expressions and division by zero have no value', () => {
  assert.deepEqual(['1/0', '2*(3', '2 3', '', '4+', 'x+1', '(1)(2)'].map(value), [
    null,
    null,
    null,
    null,
    null,
    null,
    null,
  ]);
});

function play(answer: string): [number, boolean] {
  const env = new CountdownEnv(COUNTDOWN.defaults);
  env.load({ target: 24, numbers: [3, 5, 8, 1] });
  const r = env.step(answer);
  return [r.reward, r.success];
}

test('rewards: 1 for the target with the numbers, 0.1 for the numbers only, 0 otherwise', () => {
  assert.deepEqual(play('(5-3+1)*8'), [1, true]);
  assert.deepEqual(play('3+5+8+1'), [0.1, false]);
  assert.deepEqual(play('3*8'), [0, false]);
  assert.deepEqual(play('(5-3)*(8+1)+6'), [0, false]);
});

test('the right numbers earn 0.1 even when the answer does not parse to the end (RAGEN reads every digit run)', () => {
  const env = (numbers: number[], target: number) => {
    const e = new CountdownEnv(COUNTDOWN.defaults);
    e.load({ target, numbers });
    return e;
  };
  assert.equal(env([2, 3, 4], 14).step('2(3+4)').reward, 0.1);
  assert.equal(env([1, 2, 3], 15).step('1 2+3').reward, 0.1);
  assert.equal(env([2, 3], 8).step('2**3').reward, 0.1, '** is not in the grammar: the right numbers, no value');
  assert.equal(env([7, 2], 3).step('7//2').reward, 0.1);
  assert.equal(env([7, 2], 3).step('7//2//2').reward, 0);
});

test('only digits, operators, parentheses and spaces are an action', () => {
  const env = new CountdownEnv(COUNTDOWN.defaults);
  assert.deepEqual(
    [' 1 + 2 ', 'one', '3 = 3', '()', ''].map((t) => env.matchAction(t)),
    ['1 + 2', null, null, null, null],
  );
});

test('every generated instance (500 seeds) is solved by the solver within the rules', () => {
  for (let seed = 0; seed < 500; seed++) {
    const inst = generateCountdown(new Prng(seed), COUNTDOWN.defaults);
    assert.ok(inst.numbers.length >= 3 && inst.numbers.length <= 4 && inst.target >= 1 && inst.target <= 100);
    const solution = solveCountdown(inst.numbers, inst.target);
    assert.ok(solution, `seed ${seed}: ${JSON.stringify(inst)}`);
    const { value: v, numbers } = evaluateExpression(solution);
    assert.ok(v && v.den === 1n && v.num === BigInt(inst.target) && sameMultiset(numbers, inst.numbers), solution);
  }
});

test('the solver says when no expression exists', () => {
  assert.equal(solveCountdown([1, 1, 1], 100), null);
});

test('a format-only (random) demonstration answers with the given numbers in random order: 0.1, or 1 by luck', () => {
  const returns = Array.from({ length: 20 }, (_, seed) => expertEpisode('countdown', seed, 'compact', 'random')).map(
    (r) => {
      assert.equal(r.messages.filter((m) => m.role === 'assistant').length, 1);
      return r.return;
    },
  );
  assert.ok(
    returns.every((r) => r === 0.1 || r === 1),
    JSON.stringify(returns),
  );
  assert.ok(returns.filter((r) => r === 1).length < 5);
});
