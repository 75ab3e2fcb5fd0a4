/**
 * Exact arithmetic for Countdown answers: + − × ÷ and parentheses over integers, evaluated as
 * BigInt fractions so that no rounding can make a wrong answer right (or a right one wrong).
 * Grammar: expr = term (('+'|'-') term)* ; term = factor (('*'|'/') factor)* ;
 *          factor = ('+'|'-') factor | integer | '(' expr ')'.
 */
export interface Fraction {
  num: bigint;
  den: bigint; // always > 0, gcd(num, den) = 1
}

export interface Evaluation {
  /** Null when the expression does not parse or divides by zero. */
  value: Fraction | null;
  /** Integer literals in order of appearance. */
  numbers: number[];
}

/** Longest expression evaluated: bounds the work (and the recursion depth) on hostile input. */
export const MAX_EXPRESSION_LENGTH = 256;
export const EXPRESSION_CHARS = /^[0-9+\-*/()\s]+$/;

export function fraction(num: bigint, den = 1n): Fraction {
  if (den < 0n) {
    num = -num;
    den = -den;
  }
  const g = gcd(num < 0n ? -num : num, den);
  return g > 1n ? { num: num / g, den: den / g } : { num, den };
}

function gcd(a: bigint, b: bigint): bigint {
  while (b) [a, b] = [b, a % b];
  return a === 0n ? 1n : a;
}

export function applyOp(op: string, a: Fraction, b: Fraction): Fraction | null {
  switch (op) {
    case '+':
      return fraction(a.num * b.den + b.num * a.den, a.den * b.den);
    case '-':
      return fraction(a.num * b.den - b.num * a.den, a.den * b.den);
    case '*':
      return fraction(a.num * b.num, a.den * b.den);
    case '/':
      return b.num === 0n ? null : fraction(a.num * b.den, a.den * b.num);
    default:
      return null;
  }
}

export function evaluateExpression(text: string): Evaluation {
  const numbers: number[] = [];
  if (text.length > MAX_EXPRESSION_LENGTH || !EXPRESSION_CHARS.test(text)) return { value: null, numbers };
  const tokens = text.match(/\d+|[+\-*/()]/g) ?? [];
  let pos = 0;
  const peek = (): string | undefined => tokens[pos];

  const factor = (): Fraction | null => {
    const t = tokens[pos++];
    if (t === '+' || t === '-') {
      const inner = factor();
      return inner && t === '-' ? fraction(-inner.num, inner.den) : inner;
    }
    if (t === '(') {
      const inner = expr();
      return inner && tokens[pos++] === ')' ? inner : null;
    }
    if (t !== undefined && /^\d+$/.test(t)) {
      numbers.push(Number(t));
      return fraction(BigInt(t));
    }
    return null;
  };
  const chain = (ops: string, operand: () => Fraction | null) => (): Fraction | null => {
    let acc = operand();
    while (acc && peek() !== undefined && ops.includes(peek() as string)) {
      const op = tokens[pos++] as string;
      const rhs = operand();
      acc = rhs ? applyOp(op, acc, rhs) : null;
    }
    return acc;
  };
  const term = chain('*/', factor);
  const expr: () => Fraction | null = chain('+-', term);

  const value = expr();
  return { value: value && pos === tokens.length ? value : null, numbers };
}

/** Whether two lists hold the same numbers with the same multiplicities. */
export function sameMultiset(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  const x = a.slice().sort((p, q) => p - q);
  const y = b.slice().sort((p, q) => p - q);
  return x.every((v, i) => v === y[i]);
}
