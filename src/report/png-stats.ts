/**
 * Decodes an 8-bit, non-interlaced PNG (what Chromium's screenshots are) far enough to tell a drawn
 * chart from a blank one: the variance of pixel brightness. The exporter checks every image with it,
 * and the browser tests use it too.
 */
import { inflateSync } from 'node:zlib';
import { CorruptDataError } from '../errors.ts';

export interface PngStats {
  width: number;
  height: number;
  /** Mean and variance of brightness (0–255, mean of R, G, B) over all pixels. */
  mean: number;
  variance: number;
}

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** Bytes per pixel by PNG colour type (8-bit depth): grey, RGB, grey+alpha, RGBA. */
const CHANNELS: Record<number, number> = { 0: 1, 2: 3, 4: 2, 6: 4 };

interface Header {
  width: number;
  height: number;
  channels: number;
}

function parseChunks(png: Buffer): { header: Header; data: Buffer } {
  if (!png.subarray(0, 8).equals(SIGNATURE)) throw new CorruptDataError('not a PNG file');
  let header: Header | undefined;
  const idat: Buffer[] = [];
  for (let pos = 8; pos + 8 <= png.length;) {
    const length = png.readUInt32BE(pos);
    const type = png.toString('latin1', pos + 4, pos + 8);
    const body = png.subarray(pos + 8, pos + 8 + length);
    if (type === 'IHDR') {
      const [depth, colourType, interlace] = [body[8], body[9], body[12]];
      if (depth !== 8 || interlace !== 0 || !(colourType in CHANNELS)) {
        const what = `depth ${depth}, colour type ${colourType}, interlace ${interlace}`;
        throw new CorruptDataError(`unsupported PNG (${what})`);
      }
      header = { width: body.readUInt32BE(0), height: body.readUInt32BE(4), channels: CHANNELS[colourType] };
    } else if (type === 'IDAT') idat.push(body);
    else if (type === 'IEND') break;
    pos += 12 + length;
  }
  if (!header) throw new CorruptDataError('PNG without IHDR');
  return { header, data: inflateSync(Buffer.concat(idat)) };
}

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c;
  const [pa, pb, pc] = [Math.abs(p - a), Math.abs(p - b), Math.abs(p - c)];
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

function predict(filter: number, a: number, b: number, c: number): number {
  switch (filter) {
    case 0:
      return 0;
    case 1:
      return a;
    case 2:
      return b;
    case 3:
      return (a + b) >> 1;
    case 4:
      return paeth(a, b, c);
    default:
      throw new CorruptDataError(`unknown PNG row filter ${filter}`);
  }
}

/** Undoes the per-row filters (PNG spec §9) into raw pixel bytes. */
function unfilter(data: Buffer, { width, height, channels }: Header): Uint8Array {
  const stride = width * channels;
  const out = new Uint8Array(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = data[y * (stride + 1)];
    const src = y * (stride + 1) + 1;
    const row = y * stride;
    for (let x = 0; x < stride; x++) {
      const a = x >= channels ? out[row + x - channels] : 0;
      const b = y > 0 ? out[row - stride + x] : 0;
      const c = x >= channels && y > 0 ? out[row - stride + x - channels] : 0;
      out[row + x] = (data[src + x] + predict(filter, a, b, c)) & 0xff;
    }
  }
  return out;
}

export function pngStats(png: Buffer): PngStats {
  const { header, data } = parseChunks(png);
  const pixels = unfilter(data, header);
  const colour = header.channels >= 3 ? 3 : 1;
  let sum = 0;
  let sumSq = 0;
  const n = header.width * header.height;
  for (let i = 0; i < n; i++) {
    let v = 0;
    for (let ch = 0; ch < colour; ch++) v += pixels[i * header.channels + ch];
    v /= colour;
    sum += v;
    sumSq += v * v;
  }
  const mean = n ? sum / n : 0;
  return { width: header.width, height: header.height, mean, variance: n ? sumSq / n - mean * mean : 0 };
}
