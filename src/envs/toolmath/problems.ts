/**
 * Tool-integrated math problems: exact integer answers that are hard to get mentally and easy with a few
 * lines of code. Each problem carries a one-line JavaScript solution (one line so that it also fits the
 * inline call format of the compact template), which demonstrations and tests run in the sandbox.
 * Answers are computed here with BigInt or closed forms, never by running that code.
 */
import type { Prng } from '../prng.ts';

export const TOOLMATH_KINDS = ['multiply', 'power-mod', 'digit-sum', 'count-digit-sum', 'sum-powers'] as const;
export type ToolmathKind = (typeof TOOLMATH_KINDS)[number];

export interface ToolmathProblem {
  kind: ToolmathKind;
  /** The problem as the agent reads it. */
  text: string;
  /** The exact answer: a decimal integer. */
  answer: string;
  /** A one-line JavaScript program that prints the answer. */
  code: string;
}

/** A uniformly drawn integer with exactly `digits` decimal digits. */
function randomDigits(prng: Prng, digits: number): bigint {
  let s = String(prng.range(1, 9));
  for (let i = 1; i < digits; i++) s += String(prng.int(10));
  return BigInt(s);
}

/** Large-number arithmetic: the product of two (6 + 2·scale)-digit numbers. */
function multiply(prng: Prng, scale: number): ToolmathProblem {
  const a = randomDigits(prng, 6 + 2 * scale);
  const b = randomDigits(prng, 6 + 2 * scale);
  return { kind: 'multiply', text: `Compute ${a} * ${b}.`, answer: String(a * b), code: `console.log(${a}n * ${b}n)` };
}

export function powMod(base: bigint, exponent: bigint, modulus: bigint): bigint {
  let result = 1n % modulus;
  let b = base % modulus;
  for (let e = exponent; e > 0n; e >>= 1n) {
    if (e & 1n) result = (result * b) % modulus;
    b = (b * b) % modulus;
  }
  return result;
}

/** Modular arithmetic: base^exponent mod m with an exponent far too large to expand. */
function powerMod(prng: Prng, scale: number): ToolmathProblem {
  const base = BigInt(prng.range(2, 999));
  const exponent = BigInt(prng.range(1000, 10 ** (3 + scale)));
  const modulus = BigInt(prng.range(1000, 10 ** (3 + scale)));
  const code =
    `let r = 1n, b = ${base}n % ${modulus}n, e = ${exponent}n; ` +
    `while (e > 0n) { if (e & 1n) r = r * b % ${modulus}n; b = b * b % ${modulus}n; e >>= 1n; } console.log(r)`;
  return {
    kind: 'power-mod',
    text: `Compute ${base}^${exponent} mod ${modulus}.`,
    answer: String(powMod(base, exponent, modulus)),
    code,
  };
}

/** Large-number arithmetic: the digit sum of a power with a hundred-odd digits. */
function digitSum(prng: Prng, scale: number): ToolmathProblem {
  const base = prng.range(2, 9);
  const exponent = prng.range(50 * scale, 150 * scale);
  const digits = String(BigInt(base) ** BigInt(exponent));
  const answer = Array.from(digits).reduce((s, d) => s + Number(d), 0);
  return {
    kind: 'digit-sum',
    text: `Compute the sum of the digits of ${base}^${exponent}.`,
    answer: String(answer),
    code: `let s = 0; for (const d of String(${base}n ** ${exponent}n)) s += Number(d); console.log(s)`,
  };
}

/** Integers in [0, n] whose digit sum is `target`, by digit dynamic programming (no loop over n). */
export function countDigitSum(n: number, target: number): number {
  const digits = Array.from(String(n), Number);
  // ways[k][t]: strings of k digits (leading zeros allowed) with digit sum t.
  const ways: number[][] = [[1, ...new Array<number>(target).fill(0)]];
  for (let k = 1; k <= digits.length; k++) {
    ways.push(
      Array.from({ length: target + 1 }, (_, t) => {
        let sum = 0;
        for (let d = 0; d <= 9 && d <= t; d++) sum += (ways[k - 1] as number[])[t - d] as number;
        return sum;
      }),
    );
  }
  let count = 0;
  let prefix = 0;
  digits.forEach((digit, i) => {
    const rest = digits.length - i - 1;
    const row = ways[rest] as number[];
    for (let d = 0; d < digit; d++) if (prefix + d <= target) count += row[target - prefix - d] as number;
    prefix += digit;
  });
  return count + (prefix === target ? 1 : 0);
}

/** Counting: how many integers up to N (10^(2+scale) … 10^(3+scale)) have a given digit sum. */
function countDigitSumProblem(prng: Prng, scale: number): ToolmathProblem {
  const n = prng.range(10 ** (2 + scale), 10 ** (3 + scale));
  const target = prng.range(5, 20);
  const code =
    `let c = 0; for (let n = 1; n <= ${n}; n++) { let s = 0; ` +
    `for (let x = n; x > 0; x = Math.floor(x / 10)) s += x % 10; if (s === ${target}) c++; } console.log(c)`;
  return {
    kind: 'count-digit-sum',
    text: `How many integers from 1 to ${n} have digit sum ${target}?`,
    answer: String(countDigitSum(n, target)),
    code,
  };
}

/** Sums of sequences: 1^p + 2^p + … + N^p. */
function sumPowers(prng: Prng, scale: number): ToolmathProblem {
  const n = prng.range(100 * scale, 1000 * scale);
  const p = prng.range(2, 3 + scale);
  let sum = 0n;
  for (let i = 1n; i <= BigInt(n); i++) sum += i ** BigInt(p);
  return {
    kind: 'sum-powers',
    text: `Compute 1^${p} + 2^${p} + ... + ${n}^${p}.`,
    answer: String(sum),
    code: `let s = 0n; for (let i = 1n; i <= ${n}n; i++) s += i ** ${p}n; console.log(s)`,
  };
}

export const TOOLMATH_GENERATORS: Record<ToolmathKind, (prng: Prng, scale: number) => ToolmathProblem> = {
  multiply,
  'power-mod': powerMod,
  'digit-sum': digitSum,
  'count-digit-sum': countDigitSumProblem,
  'sum-powers': sumPowers,
};

/** The integer in the last \boxed{…} of `text` (spaces, commas and underscores ignored), or null. */
export function boxedInteger(text: string): string | null {
  const open = text.lastIndexOf('\\boxed{');
  if (open < 0) return null;
  const close = text.indexOf('}', open);
  if (close < 0) return null;
  const inner = text.slice(open + '\\boxed{'.length, close).replace(/[\s,_]/g, '');
  const m = /^([+-]?)(\d{1,2000})$/.exec(inner);
  if (!m) return null;
  const value = BigInt(m[2] as string);
  return String(m[1] === '-' ? -value : value);
}
