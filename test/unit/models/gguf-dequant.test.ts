import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { dequantize } from '../../../src/models/gguf/dequant.ts';
import type { GgmlTypeName } from '../../../src/models/gguf/types.ts';

// Raw blocks and `gguf.quants.dequantize` of them (scripts/gguf_reference.py dequant).
const FIXTURE = JSON.parse(readFileSync(new URL('../../fixtures/gguf/dequant.json', import.meta.url), 'utf8')) as {
  cases: Record<GgmlTypeName, { shape: number[]; raw: string; float32: string }>;
};

const bytes = (b64: string): Uint8Array => new Uint8Array(Buffer.from(b64, 'base64'));

for (const [type, c] of Object.entries(FIXTURE.cases) as [GgmlTypeName, (typeof FIXTURE.cases)[GgmlTypeName]][]) {
  test(`${type} dequantises bit for bit as the gguf package does`, () => {
    const count = c.shape.reduce((a, b) => a * b, 1);
    const got = dequantize(type, bytes(c.raw), count);
    assert.deepEqual(new Uint8Array(got.buffer), bytes(c.float32));
  });
}

test('the fixture covers every type the issue names', () => {
  const names = ['F16', 'BF16', 'Q8_0', 'Q4_0', 'Q4_1', 'Q5_0', 'Q5_1', 'Q2_K', 'Q3_K', 'Q4_K', 'Q5_K', 'Q6_K'];
  assert.deepEqual(Object.keys(FIXTURE.cases).sort(), names.sort());
});

test('too few bytes for the weights asked is refused', () => {
  assert.throws(() => dequantize('Q8_0', new Uint8Array(33), 32), /33 bytes do not hold 32 weights/);
});
