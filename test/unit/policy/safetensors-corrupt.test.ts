import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CorruptDataError } from '../../../src/errors.ts';
import { parseSafetensors, readSafetensors, serializeSafetensors } from '../../../src/policy/io/safetensors.ts';

function file(json: string, dataBytes: number): Buffer {
  const body = Buffer.from(json, 'utf8');
  const out = Buffer.alloc(8 + body.length + dataBytes);
  out.writeBigUInt64LE(BigInt(body.length), 0);
  body.copy(out, 8);
  return out;
}

function assertCorrupt(bytes: Uint8Array, message: RegExp): void {
  assert.throws(
    () => parseSafetensors(bytes, 'x.safetensors'),
    (err: unknown) => {
      assert.ok(err instanceof CorruptDataError, `expected CorruptDataError, got ${String(err)}`);
      assert.match(err.message, message);
      return true;
    },
  );
}

const entry = (dtype: string, shape: number[], begin: number, end: number) =>
  JSON.stringify({ dtype, shape, data_offsets: [begin, end] });

test('a file shorter than the length prefix is truncated', () => {
  assertCorrupt(new Uint8Array(5), /x\.safetensors: truncated safetensors file \(5 bytes/);
});

test('a header length beyond the file is refused', () => {
  const bytes = file('{}', 0);
  bytes.writeBigUInt64LE(1000n, 0);
  assertCorrupt(bytes, /header length 1000 runs beyond the end of the 10-byte file/);
});

test('a header that is not JSON is refused', () => {
  assertCorrupt(file('{"a":', 0), /header is not valid UTF-8 JSON/);
});

test('an unknown dtype is refused', () => {
  assertCorrupt(file(`{"a":${entry('F8', [1], 0, 1)}}`, 1), /tensor a: unknown dtype "F8"/);
});

test('a shape that disagrees with the byte span is refused', () => {
  assertCorrupt(
    file(`{"a":${entry('F32', [3], 0, 8)}}`, 8),
    /tensor a: shape \[3\] of F32 needs 12 bytes but data_offsets span 8/,
  );
});

test('offsets past the data section are out of bounds', () => {
  assertCorrupt(
    file(`{"a":${entry('F32', [2], 0, 8)}}`, 4),
    /tensor a data_offsets \[0, 8\] out of bounds \(data section is 4 bytes\)/,
  );
});

test('overlapping tensors are refused', () => {
  const json = `{"a":${entry('F32', [2], 0, 8)},"b":${entry('F32', [2], 4, 12)}}`;
  assertCorrupt(file(json, 12), /tensors a and b overlap/);
});

test('malformed offsets and shapes are refused', () => {
  assertCorrupt(file(`{"a":${entry('U8', [1], 2, 1)}}`, 2), /data_offsets \[2,1\] are not \[begin, end\]/);
  assertCorrupt(file(`{"a":${entry('U8', [-1], 0, 0)}}`, 0), /shape \[-1\] is not a list of non-negative integers/);
});

test('non-string metadata is refused', () => {
  assertCorrupt(file('{"__metadata__":{"step":3}}', 0), /__metadata__\.step is not a string/);
});

test('a file cut short inside its data is refused on open', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'starpo-st-'));
  try {
    const whole = serializeSafetensors([['w', { dtype: 'F32', shape: [4], data: new Float32Array(4) }]]);
    const path = join(dir, 'cut.safetensors');
    await writeFile(path, whole.subarray(0, whole.length - 3));
    await assert.rejects(readSafetensors(path), (err: unknown) => {
      assert.ok(err instanceof CorruptDataError);
      assert.match(
        err.message,
        /cut\.safetensors: tensor w data_offsets \[0, 16\] out of bounds \(data section is 13 bytes\)/,
      );
      return true;
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
