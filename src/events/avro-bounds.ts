/**
 * A bounds check of Avro binary data against its writer's schema, run before avsc decodes it. avsc
 * trusts what it reads: a damaged array count of 2^31−1 makes it allocate and loop for minutes before
 * it notices the buffer ended. This walk reads the same grammar without building values, never trusts
 * a length or a count before comparing it with the bytes that remain, and keeps its own stack (no
 * recursion), so any input costs time and memory linear in its size. Once it passes, avsc's decode
 * of the same bytes stays inside them.
 */
import type avro from 'avsc';
import { CorruptDataError } from '../errors.ts';

/** Thrown when the data ends before the value does (a short read may just need more bytes). */
export class TruncatedDataError extends CorruptDataError {}

/** Pending work: `left` more values of `type`, or (for a map) `left` more key/value entries. */
interface Frame {
  type: avro.Type;
  left: number;
  mapEntries: boolean;
}

type TypeInfo = avro.Type & {
  fields?: { type: avro.Type }[];
  itemsType?: avro.Type;
  valuesType?: avro.Type;
  types?: avro.Type[];
  underlyingType?: avro.Type;
  getSize?: () => number;
  getSymbols?: () => string[];
};

const FIXED_WIDTH: Record<string, number> = { null: 0, boolean: 1, float: 4, double: 8 };
const VARINTS = new Set(['int', 'long']);

class Cursor {
  constructor(
    readonly buf: Buffer,
    public pos: number,
  ) {}

  get remaining(): number {
    return this.buf.length - this.pos;
  }

  /** A zig-zag varint (at most 10 bytes), as a double: exact up to 2^53, which bounds every check below. */
  varint(): number {
    let value = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.buf.length) throw new TruncatedDataError(`data ends inside a number at byte ${this.pos}`);
      const b = this.buf[this.pos++] as number;
      value += (b & 0x7f) * scale;
      if ((b & 0x80) === 0) return value % 2 === 1 ? -(value + 1) / 2 : value / 2;
      scale *= 128;
    }
    throw new CorruptDataError(`a number longer than 10 bytes ends at byte ${this.pos}`);
  }

  skip(n: number, what: string): void {
    if (n > this.remaining) {
      const why = `${what} of ${n} bytes at byte ${this.pos} runs past the ${this.remaining} that remain`;
      throw new TruncatedDataError(why);
    }
    this.pos += n;
  }

  /** A length or count; negative values are corrupt, values beyond what remains are a short read. */
  size(what: string, unit = 1): number {
    const at = this.pos;
    const n = this.varint();
    if (n < 0) throw new CorruptDataError(`negative ${what} ${n} at byte ${at}`);
    if (n * unit > this.remaining) {
      throw new TruncatedDataError(`${what} ${n} at byte ${at} claims more than the ${this.remaining} bytes left`);
    }
    return n;
  }
}

/** The fewest bytes one value of `type` takes (0 for null and empty records; recursion counts as 0). */
function minSize(type: TypeInfo, memo: Map<avro.Type, number>): number {
  const known = memo.get(type);
  if (known !== undefined) return known;
  memo.set(type, 0);
  const name = type.typeName;
  let size = FIXED_WIDTH[name] ?? 1; // varints, lengths, counts, enum and union indexes take at least one byte
  if (type.underlyingType) size = minSize(type.underlyingType as TypeInfo, memo);
  else if (name === 'fixed') size = type.getSize!();
  else if (name === 'record' || name === 'error') {
    size = (type.fields ?? []).reduce((sum, f) => sum + minSize(f.type as TypeInfo, memo), 0);
  }
  memo.set(type, size);
  return size;
}

/**
 * Checks one value of `type` (the WRITER's schema) at `pos`; returns where it ends. CorruptDataError when
 * the bytes cannot be such a value, TruncatedDataError when they end too soon. Every array or map item
 * is counted as at least one byte (starpo's schemas have no zero-byte items), so a count never exceeds
 * the bytes left.
 */
export function checkEncoded(type: avro.Type, buf: Buffer, pos = 0): number {
  const cursor = new Cursor(buf, pos);
  const memo = new Map<avro.Type, number>();
  const stack: Frame[] = [{ type, left: 1, mapEntries: false }];
  while (stack.length > 0) {
    const top = stack[stack.length - 1] as Frame;
    if (top.left === 0) {
      stack.pop();
      continue;
    }
    if (VARINTS.has(top.type.typeName) && !top.mapEntries) {
      for (; top.left > 0; top.left--) cursor.varint(); // token id arrays: the hot loop, kept tight
      continue;
    }
    top.left--;
    if (top.mapEntries) cursor.skip(cursor.size('map key length'), 'map key');
    const more = step(top.type as TypeInfo, cursor, memo);
    if (more) stack.push(...more);
  }
  return cursor.pos;
}

type Step = (type: TypeInfo, cursor: Cursor, memo: Map<avro.Type, number>) => Frame[] | null;

const one = (type: avro.Type): Frame[] => [{ type, left: 1, mapEntries: false }];
const scalar =
  (read: (cursor: Cursor, type: TypeInfo) => void): Step =>
  (type, cursor) => (read(cursor, type), null);
const union: Step = (type, cursor) => one(type.types![index(cursor, type.types!.length, 'union branch')] as avro.Type);
const record: Step = (type) => (type.fields ?? []).map((f) => one(f.type)[0] as Frame).reverse();

/** How to read one value of each Avro type: its scalar part, then its children's frames (pushed last = read first). */
const STEPS: Record<string, Step> = {
  null: scalar(() => undefined),
  boolean: scalar((c) => c.skip(1, 'boolean')),
  float: scalar((c) => c.skip(4, 'float')),
  double: scalar((c) => c.skip(8, 'double')),
  int: scalar((c) => void c.varint()),
  long: scalar((c) => void c.varint()),
  bytes: scalar((c) => c.skip(c.size('bytes length'), 'bytes')),
  string: scalar((c) => c.skip(c.size('string length'), 'string')),
  fixed: scalar((c, t) => c.skip(t.getSize!(), 'fixed')),
  enum: scalar((c, t) => void index(c, t.getSymbols!().length, 'enum symbol')),
  'union:wrapped': union,
  'union:unwrapped': union,
  record,
  error: record,
  array: (type, cursor, memo) => block(type, cursor, memo),
  map: (type, cursor, memo) => block(type, cursor, memo),
};

function step(type: TypeInfo, cursor: Cursor, memo: Map<avro.Type, number>): Frame[] | null {
  if (type.underlyingType) return one(type.underlyingType); // a logical type reads as its underlying one
  const read = Object.hasOwn(STEPS, type.typeName) ? STEPS[type.typeName] : undefined;
  if (read === undefined) throw new CorruptDataError(`cannot check Avro type ${type.typeName}`);
  return read(type, cursor, memo);
}

function index(cursor: Cursor, count: number, what: string): number {
  const at = cursor.pos;
  const i = cursor.varint();
  if (!Number.isInteger(i) || i < 0 || i >= count) throw new CorruptDataError(`${what} ${i} of ${count} at byte ${at}`);
  return i;
}

/** One block of an array or map: its items, then (pushed first, read after them) the rest of the value. */
function block(type: TypeInfo, cursor: Cursor, memo: Map<avro.Type, number>): Frame[] | null {
  const isMap = type.typeName === 'map';
  const item = (isMap ? type.valuesType : type.itemsType) as TypeInfo;
  const at = cursor.pos;
  let n = cursor.varint();
  if (n === 0) return null;
  if (n < 0) {
    n = -n;
    cursor.size('block byte length'); // a block that says its size; the items are checked one by one anyway
  }
  const unit = Math.max(1, minSize(item, memo) + (isMap ? 1 : 0));
  if (n * unit > cursor.remaining) {
    const what = isMap ? 'map entries' : 'array items';
    throw new TruncatedDataError(`${n} ${what} at byte ${at} need more than the ${cursor.remaining} bytes that remain`);
  }
  return [...one(type), { type: item, left: n, mapEntries: isMap }];
}
