import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DTYPE_BYTES,
  bf16ToF32,
  f16ToF32,
  f32BitsToBf16,
  f32BitsToF16,
  type Tensor,
} from '../../../src/policy/io/dtype.ts';
import {
  SafetensorsReader,
  parseSafetensors,
  readSafetensors,
  serializeSafetensors,
  writeSafetensors,
} from '../../../src/policy/io/safetensors.ts';

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'starpo-st-'));
  try {
    await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The header bytes a safetensors writer must produce: u64 LE length, JSON, spaces up to a multiple of 8. */
function headerBytes(json: string): Uint8Array {
  const body = Buffer.from(json, 'utf8');
  const padded = body.length + ((8 - (body.length % 8)) % 8);
  const out = Buffer.alloc(8 + padded, 0x20);
  out.writeBigUInt64LE(BigInt(padded), 0);
  body.copy(out, 8);
  return out;
}

test('reads a file written byte by byte with a known header', () => {
  const json =
    '{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"U8","shape":[],"data_offsets":[8,9]}}';
  const data = [0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0xc0, 0x07]; // 1.0, -2.0 (F32 LE), 7 (U8)
  const file = Buffer.concat([headerBytes(json), Buffer.from(data)]);
  const { tensors, metadata } = parseSafetensors(file);
  assert.deepEqual(metadata, {});
  assert.deepEqual(tensors.get('w'), { dtype: 'F32', shape: [2], data: new Float32Array([1, -2]) });
  assert.deepEqual(tensors.get('b'), { dtype: 'U8', shape: [], data: new Uint8Array([7]) });
});

test('writes the exact bytes of the reference format, header padded to 8', () => {
  const bytes = serializeSafetensors([['x', { dtype: 'U8', shape: [3], data: new Uint8Array([1, 2, 3]) }]], {
    format: 'pt',
  });
  const json = '{"__metadata__":{"format":"pt"},"x":{"dtype":"U8","shape":[3],"data_offsets":[0,3]}}';
  assert.deepEqual(Buffer.from(bytes), Buffer.concat([headerBytes(json), Buffer.from([1, 2, 3])]));
  assert.equal((bytes.length - 3) % 8, 0);
});

const EVERY_DTYPE: [string, Tensor][] = [
  ['f64', { dtype: 'F64', shape: [2], data: new Float64Array([Math.PI, -1e300]) }],
  ['f32', { dtype: 'F32', shape: [2, 3], data: new Float32Array([1, 2, 3, 4.5, -0, 1e-30]) }],
  ['f16', { dtype: 'F16', shape: [3], data: new Float32Array([1, -2.5, 65504]) }],
  ['bf16', { dtype: 'BF16', shape: [1, 2], data: new Float32Array([3.140625, -123.5]) }],
  ['i64', { dtype: 'I64', shape: [2], data: new BigInt64Array([-(2n ** 62n), 42n]) }],
  ['i32', { dtype: 'I32', shape: [3], data: new Int32Array([-2147483648, 0, 2147483647]) }],
  ['u8', { dtype: 'U8', shape: [0], data: new Uint8Array([]) }],
  ['scalar', { dtype: 'U8', shape: [], data: new Uint8Array([255]) }],
];

test('round-trips every dtype through a file; F16 and BF16 load as F32', async () => {
  await withDir(async (dir) => {
    const path = join(dir, 'all.safetensors');
    await writeSafetensors(path, EVERY_DTYPE, { step: '7' });
    const { tensors, metadata } = await readSafetensors(path);
    assert.deepEqual(metadata, { step: '7' });
    for (const [name, t] of EVERY_DTYPE) {
      const expected = t.dtype === 'F16' || t.dtype === 'BF16' ? { ...t, dtype: 'F32' } : t;
      assert.deepEqual(tensors.get(name), expected, name);
    }
    assert.deepEqual(await readdir(dir), ['all.safetensors'], 'no temporary file left behind');
  });
});

test('aligns every tensor to its element size, largest first', async () => {
  const bytes = serializeSafetensors(EVERY_DTYPE);
  await withDir(async (dir) => {
    await writeFile(join(dir, 'a.safetensors'), bytes);
    const reader = await SafetensorsReader.open(join(dir, 'a.safetensors'));
    for (const t of reader.header.tensors) assert.equal(t.begin % DTYPE_BYTES[t.dtype], 0, t.name);
    assert.deepEqual(reader.names(), ['f64', 'i64', 'f32', 'i32', 'bf16', 'f16', 'scalar', 'u8']);
    assert.equal(reader.header.dataStart % 8, 0);
    assert.deepEqual((await reader.read('i32')).data, new Int32Array([-2147483648, 0, 2147483647]));
    await reader.close();
  });
});

test('keeps tensor names that look like integers in order', () => {
  const t: Tensor = { dtype: 'U8', shape: [1], data: new Uint8Array([1]) };
  const bytes = serializeSafetensors([
    ['b', t],
    ['10', t],
    ['2', t],
  ]);
  assert.deepEqual([...parseSafetensors(bytes).tensors.keys()], ['10', '2', 'b']);
});

test('converts known F16 bit patterns', () => {
  const bits = new Uint16Array([0x3c00, 0xc000, 0x7bff, 0x0001, 0x3555, 0x7c00, 0xfc00, 0x8000]);
  assert.deepEqual([...f16ToF32(bits)], [1, -2, 65504, 2 ** -24, 0.333251953125, Infinity, -Infinity, -0]);
  assert.ok(Number.isNaN(f16ToF32(new Uint16Array([0x7e00]))[0]));
});

test('converts known BF16 bit patterns', () => {
  const bits = new Uint16Array([0x3f80, 0x4049, 0xc2f7, 0x0001, 0x7f80]);
  assert.deepEqual([...bf16ToF32(bits)], [1, 3.140625, -123.5, 2 ** -133, Infinity]);
});

test('narrows F32 to F16 and BF16 rounding to nearest even', () => {
  const bitsOf = (x: number) => new Uint32Array(new Float32Array([x]).buffer)[0];
  assert.equal(f32BitsToF16(bitsOf(1 + 2 ** -11)), 0x3c00); // halfway, rounds to even (down)
  assert.equal(f32BitsToF16(bitsOf(1 + 3 * 2 ** -11)), 0x3c02); // halfway, rounds to even (up)
  assert.equal(f32BitsToF16(bitsOf(65520)), 0x7c00); // overflows to Inf
  assert.equal(f32BitsToF16(bitsOf(2 ** -25)), 0x0000); // exactly half the smallest subnormal → 0
  assert.equal(f32BitsToF16(bitsOf(1.5 * 2 ** -25)), 0x0001);
  assert.equal(f32BitsToF16(bitsOf(-3 * 2 ** -24)), 0x8003);
  assert.equal(f32BitsToBf16(bitsOf(1 + 2 ** -8)), 0x3f80);
  assert.equal(f32BitsToBf16(bitsOf(1 + 3 * 2 ** -8)), 0x3f82);
  assert.equal(f32BitsToBf16(bitsOf(NaN)), 0x7fc0);
});

test('F16 survives every representable value', () => {
  const all = new Uint16Array(65536).map((_, i) => i);
  const widened = f16ToF32(all);
  const bits = new Uint32Array(widened.buffer);
  for (let i = 0; i < 65536; i++) {
    if (!Number.isNaN(widened[i])) assert.equal(f32BitsToF16(bits[i]), i);
  }
});

test('writes raw Uint16Array BF16 bits unchanged', async () => {
  const bytes = serializeSafetensors([['h', { dtype: 'BF16', shape: [2], data: new Uint16Array([0x3f80, 0xc2f7]) }]]);
  assert.deepEqual(parseSafetensors(bytes).tensors.get('h')?.data, new Float32Array([1, -123.5]));
  assert.deepEqual([...bytes.subarray(-4)], [0x80, 0x3f, 0xf7, 0xc2]);
});

test('refuses tensors whose data does not match dtype or shape', () => {
  const bad = (t: Tensor) => () => serializeSafetensors([['t', t]]);
  assert.throws(bad({ dtype: 'F32', shape: [3], data: new Float32Array(2) }), /shape \[3\] has 3 elements, data has 2/);
  assert.throws(bad({ dtype: 'I32', shape: [1], data: new Float32Array(1) }), /I32 data cannot be a Float32Array/);
});

test('a failed write leaves neither the target nor a temporary file', async () => {
  await withDir(async (dir) => {
    const path = join(dir, 'w.safetensors');
    await writeFile(path, 'old');
    const bad: Tensor = { dtype: 'F32', shape: [2], data: new Float32Array(1) };
    await assert.rejects(writeSafetensors(path, [['t', bad]]));
    assert.equal(await readFile(path, 'utf8'), 'old');
    assert.deepEqual(await readdir(dir), ['w.safetensors']);
  });
});
