import { applyOp, fraction, type Fraction } from './expression.ts';

/**
 * Countdown solver: exhaustive search over every way to combine two of the remaining values with
 * + − × ÷ (both operand orders), exact fractions throughout. Four numbers give a few thousand
 * leaves, so no pruning is needed. Returns one fully parenthesised expression, or null.
 */
interface Term {
  value: Fraction;
  text: string;
}

const OPS = ['+', '-', '*', '/'] as const;

export function solveCountdown(numbers: readonly number[], target: number): string | null {
  const goal = fraction(BigInt(target));
  const terms = numbers.map((n) => ({ value: fraction(BigInt(n)), text: String(n) }));
  return search(terms, goal);
}

function search(terms: Term[], goal: Fraction): string | null {
  if (terms.length === 1) {
    const only = terms[0] as Term;
    return only.value.num === goal.num && only.value.den === goal.den ? only.text : null;
  }
  for (let i = 0; i < terms.length; i++) {
    for (let j = 0; j < terms.length; j++) {
      if (i === j) continue;
      const a = terms[i] as Term;
      const b = terms[j] as Term;
      const rest = terms.filter((_, k) => k !== i && k !== j);
      for (const op of OPS) {
        // + and × commute: try one order only.
        if ((op === '+' || op === '*') && j < i) continue;
        const value = applyOp(op, a.value, b.value);
        if (!value) continue;
        const found = search([...rest, { value, text: `(${a.text}${op}${b.text})` }], goal);
        if (found) return stripOuterParens(found);
      }
    }
  }
  return null;
}

function stripOuterParens(text: string): string {
  if (!text.startsWith('(') || !text.endsWith(')')) return text;
  let depth = 0;
  for (let i = 0; i < text.length - 1; i++) {
    if (text[i] === '(') depth++;
    else if (text[i] === ')') depth--;
    if (depth === 0) return text; // the first "(" closes before the end: not one outer pair
  }
  return text.slice(1, -1);
}
