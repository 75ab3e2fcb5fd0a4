/**
 * GGUF export's encodings against the `gguf` Python package's `quantize` (scripts/gguf_quantize_reference.py),
 * and the writer against starpo's own GGUF reader: what is written reads back, type for type.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { dequantize } from '../../../src/models/gguf/dequant.ts';
import { canStore, quantize, quantizeQ8_0 } from '../../../src/models/gguf/quantize.ts';
import { GgufFile } from '../../../src/models/gguf/reader.ts';
import { type GgufEntry, gguf, writeGguf } from '../../../src/models/gguf/writer.ts';

interface Case {
  name: string;
  shape: number[];
  f32: string;
  F16: string;
  Q8_0: string;
}
const FIXTURE = JSON.parse(readFileSync(new URL('../../fixtures/gguf/quantize.json', import.meta.url), 'utf8')) as {
  cases: Case[];
};
const bytes = (b64: string) => new Uint8Array(Buffer.from(b64, 'base64'));
const floats = (b64: string) => new Float32Array(bytes(b64).buffer);

const scratch = mkdtempSync(join(tmpdir(), 'starpo-gguf-quantize-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

test('F16 and Q8_0 encodings are byte for byte what the gguf package quantize writes', () => {
  for (const c of FIXTURE.cases) {
    const x = floats(c.f32);
    assert.deepEqual(quantize('F16', x), bytes(c.F16), `${c.name} F16`);
    assert.deepEqual(quantize('Q8_0', x), bytes(c.Q8_0), `${c.name} Q8_0`);
    assert.deepEqual(quantize('F32', x), bytes(c.f32), `${c.name} F32`);
  }
});

test('Q8_0 rounds halves away from zero, and a zero block has scale 0 and zero weights', () => {
  const x = new Float32Array(64);
  x.set([127, 2.5, -2.5, 0.5, -0.5, 3.5]);
  const q = quantizeQ8_0(x);
  assert.deepEqual([...new Int8Array(q.buffer, 2, 6)], [127, 3, -3, 1, -1, 4]);
  assert.deepEqual([...q.subarray(34)], new Array(34).fill(0));
  assert.deepEqual(dequantize('Q8_0', q, 64).subarray(0, 6), Float32Array.from([127, 3, -3, 1, -1, 4]));
});

test('Q8_0 refuses rows that are not whole blocks, which export then stores as F16', () => {
  assert.throws(() => quantizeQ8_0(new Float32Array(48)), /whole blocks of 32, got 48/);
  assert.equal(canStore('Q8_0', 48), false);
  assert.equal(canStore('Q8_0', 64), true);
  assert.equal(canStore('F16', 3), true);
});

test('a written GGUF reads back: metadata with its types, tensor dims in ggml order, aligned data', async () => {
  const path = join(scratch, 'small.gguf');
  const metadata = new Map<string, GgufEntry>([
    ['general.architecture', gguf.str('llama')],
    ['general.alignment', gguf.u32(32)],
    ['llama.rope.freq_base', gguf.f32(500000)],
    ['llama.attention.layer_norm_rms_epsilon', gguf.f32(1e-5)],
    ['tokenizer.ggml.add_bos_token', gguf.bool(true)],
    ['tokenizer.ggml.tokens', gguf.strings(['a', 'Ġb', '<|end|>', 'é'])],
    ['tokenizer.ggml.token_type', gguf.i32s([1, 1, 3, -1])],
    ['general.file_type', gguf.u32(7)],
  ]);
  const matrix = Float32Array.from({ length: 2 * 64 }, (_, i) => Math.sin(i) * 3);
  const vector = Float32Array.from([1, 2, 3]);
  await writeGguf(path, metadata, [
    { name: 'v', shape: [3], type: 'F32', bytes: () => quantize('F32', vector) },
    { name: 'm', shape: [2, 64], type: 'Q8_0', bytes: async () => quantize('Q8_0', matrix) },
    { name: 'h', shape: [2, 64], type: 'F16', bytes: () => quantize('F16', matrix) },
  ]);
  const file = await GgufFile.open(path);
  try {
    assert.equal(file.header.version, 3);
    assert.deepEqual(Object.fromEntries(file.metadata), {
      'general.architecture': 'llama',
      'general.alignment': 32,
      'llama.rope.freq_base': 500000,
      'llama.attention.layer_norm_rms_epsilon': Math.fround(1e-5),
      'tokenizer.ggml.add_bos_token': true,
      'tokenizer.ggml.tokens': ['a', 'Ġb', '<|end|>', 'é'],
      'tokenizer.ggml.token_type': [1, 1, 3, -1],
      'general.file_type': 7,
    });
    const [v, m, h] = file.header.tensors;
    assert.deepEqual([v!.dims, m!.dims, h!.dims], [[3], [64, 2], [64, 2]]);
    assert.deepEqual([v!.type, m!.type, h!.type], ['F32', 'Q8_0', 'F16']);
    assert.ok(file.header.tensors.every((t) => t.offset % 32 === 0));
    assert.equal(m!.offset - v!.offset, 32); // 12 bytes of F32, padded to the alignment
    assert.deepEqual(dequantize('F32', await file.raw(v!), 3), vector);
    assert.deepEqual(dequantize('Q8_0', await file.raw(m!), 128), dequantize('Q8_0', quantize('Q8_0', matrix), 128));
    const widened = dequantize('F16', await file.raw(h!), 128);
    assert.ok(widened.every((x, i) => Math.abs(x - matrix[i]!) <= 2 ** -8 * Math.abs(matrix[i]!)));
  } finally {
    await file.close();
  }
});

test('a tensor that fails while the GGUF is written leaves no file, not even a temporary one', async () => {
  const dir = mkdtempSync(join(scratch, 'failed-'));
  const path = join(dir, 'broken.gguf');
  const metadata = new Map([['general.architecture', gguf.str('llama')]]);
  const tensor = { name: 'v', shape: [4], type: 'F32' as const };
  await assert.rejects(
    writeGguf(path, metadata, [{ ...tensor, bytes: () => Promise.reject(new Error('disk on fire')) }]),
    /disk on fire/,
  );
  await assert.rejects(
    writeGguf(path, metadata, [{ ...tensor, bytes: () => new Uint8Array(12) }]),
    /gguf tensor v: 12 bytes given, 16 expected/,
  );
  assert.equal(existsSync(path), false);
  assert.deepEqual(readdirSync(dir), []);
});

test('a metadata value that does not fit its GGUF type is refused by key', async () => {
  const path = join(scratch, 'bad-meta.gguf');
  const bad = (e: GgufEntry) => writeGguf(path, new Map([['x.y', e]]), []);
  await assert.rejects(bad(gguf.u32(-1)), /gguf metadata x\.y: -1 does not fit a uint32/);
  await assert.rejects(bad(gguf.i32s([1.5])), /gguf metadata x\.y: 1\.5 does not fit a int32/);
  await assert.rejects(bad(gguf.strings([7 as unknown as string])), /gguf metadata x\.y: 7 is not a string/);
  assert.equal(existsSync(path), false);
});
