/**
 * Numbers as transformers' chat templates print them. A template runs in Python there: `json.loads` makes `1.0` a
 * float and `12345678901234567890` an exact int, and `tojson` / `{{ x }}` print `1.0`, `1e-07`, `1.5e+20` and every
 * digit. In JavaScript all of them are one kind of double, so @huggingface/jinja prints `1`, `1e-7`,
 * `150000000000000000000` and a rounded integer: the rendered prompt, and so its token ids, would differ. Values
 * parsed with lossless-json keep their source text (LosslessNumber); before rendering, each number whose Python text
 * differs from what the renderer would print becomes a marker string, and the rendered text gets the Python text in
 * its place (quoted by `tojson` or bare). A template that does arithmetic on such a number, or tests `is number`,
 * sees a string instead: chat templates print tool arguments and schemas, they do not compute with them.
 */
import { isLosslessNumber, type LosslessNumber } from 'lossless-json';

/** Python's repr of a float (what json.dumps writes): shortest round-trip digits, exponent form outside 1e-4…1e16. */
export function pythonFloatRepr(x: number): string {
  if (!Number.isFinite(x)) return Number.isNaN(x) ? 'NaN' : x > 0 ? 'Infinity' : '-Infinity';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const [mantissa, exponent] = x.toExponential().split('e') as [string, string]; // shortest round-trip digits
  const exp = Number(exponent);
  const sign = x < 0 ? '-' : '';
  const digits = mantissa.replace('-', '').replace('.', '');
  if (exp < -4 || exp >= 16) {
    const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    return `${sign}${m}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
  const whole = digits.slice(0, exp + 1).padEnd(exp + 1, '0');
  return `${sign}${whole}.${digits.slice(exp + 1) || '0'}`;
}

/** How Python prints the number `json.loads` reads from this JSON number text. */
export function pythonNumberText(text: string): string {
  if (/[.eE]/.test(text)) return pythonFloatRepr(Number(text));
  return text === '-0' ? '0' : text;
}

// Control characters around the index: printed bare, the marker keeps them raw; through tojson, JSON escapes them,
// so the quoted form (whose quotes are tojson's, to be replaced too) is told apart from a bare one inside template
// quotes. No chat text carries \u0001N…\u0002.
const OPEN = '\u0001N';
const CLOSE = '\u0002';
const QUOTED = /"\\u0001N(\d+)\\u0002"/g;
// eslint-disable-next-line no-control-regex -- the marker is made of control characters on purpose
const BARE = /\u0001N(\d+)\u0002/g;

export interface NumberMarkers {
  /** The value with every LosslessNumber replaced by a JS number or a marker string. */
  readonly value: unknown;
  /** Puts the Python text of each marked number into the rendered text. */
  restore(rendered: string): string;
}

function plainEnough(n: LosslessNumber, python: string): boolean {
  const x = Number(n.value);
  const isFloat = /[.eE]/.test(n.value);
  return String(x) === python && Number.isInteger(x) !== isFloat;
}

/** Prepares a template context (messages, tools) that may hold LosslessNumbers; see the module comment. */
export function markNumbers(value: unknown): NumberMarkers {
  const texts: string[] = [];
  const walk = (v: unknown): unknown => {
    if (isLosslessNumber(v)) {
      const python = pythonNumberText(v.value);
      if (plainEnough(v, python)) return Number(v.value);
      texts.push(python);
      return `${OPEN}${texts.length - 1}${CLOSE}`;
    }
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === 'object')
      return Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  const marked = walk(value);
  return {
    value: marked,
    restore: (rendered) =>
      texts.length === 0
        ? rendered
        : rendered.replace(QUOTED, (_, i: string) => texts[+i]!).replace(BARE, (_, i: string) => texts[+i]!),
  };
}

/** The value with every LosslessNumber made a JavaScript number (what JSON.parse would have read). */
export function plainNumbers(v: unknown): unknown {
  if (isLosslessNumber(v)) return Number(v.value);
  if (Array.isArray(v)) return v.map(plainNumbers);
  if (v !== null && typeof v === 'object') {
    return Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, plainNumbers(x)]));
  }
  return v;
}
