import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deflateSync } from 'node:zlib';
import { pngStats } from '../../../src/report/png-stats.ts';

/** A PNG from filtered rows (CRCs left zero: the decoder does not check them). */
function png(width: number, height: number, colourType: number, rows: number[][]): Buffer {
  const chunk = (type: string, body: Buffer) => {
    const head = Buffer.alloc(8);
    head.writeUInt32BE(body.length, 0);
    head.write(type, 4, 'latin1');
    return Buffer.concat([head, body, Buffer.alloc(4)]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, colourType, 0, 0, 0], 8);
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const idat = deflateSync(Buffer.from(rows.flat()));
  return Buffer.concat([signature, chunk('IHDR', ihdr), chunk('IDAT', idat), chunk('IEND', Buffer.alloc(0))]);
}

test('a uniform image has zero variance', () => {
  // Row 2 uses the "Up" filter: the same pixels as row 1.
  const stats = pngStats(
    png(2, 2, 2, [
      [0, 9, 9, 9, 9, 9, 9],
      [2, 0, 0, 0, 0, 0, 0],
    ]),
  );
  assert.deepEqual(stats, { width: 2, height: 2, mean: 9, variance: 0 });
});

test('a black and white checkerboard decodes through the Sub and Paeth filters', () => {
  const sub = [1, 0, 0, 0, 255, 255, 255]; // black, then white = left (0) + 255
  // Paeth: first pixel predicts up (black) + 255 = white; second predicts left (white) + 1 = black (mod 256).
  const paeth = [4, 255, 255, 255, 1, 1, 1];
  assert.deepEqual(pngStats(png(2, 2, 2, [sub, paeth])), { width: 2, height: 2, mean: 127.5, variance: 127.5 ** 2 });
});

test('a grey+alpha image and a non-PNG', () => {
  assert.equal(pngStats(png(1, 1, 4, [[0, 200, 255]])).mean, 200);
  assert.throws(() => pngStats(Buffer.from('not a png at all')), /not a PNG/);
});
