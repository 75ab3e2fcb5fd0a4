/**
 * The bytes of an artifact: a JSON header (metadata and the layout of each array) followed by the raw
 * little-endian contents of typed arrays, so per-token [B, T] tensors cross S3 without a JSON detour
 * and come back bit for bit.
 *   [u32 header length][header JSON][padding to 8][array 0][array 1]...
 */
import { CorruptDataError } from '../errors.ts';

type ArrayKind = 'f32' | 'i32';
export type NumericArray = Float32Array | Int32Array;
const CTORS = { f32: Float32Array, i32: Int32Array } as const;

interface Header<M> {
  meta: M;
  arrays: { name: string; kind: ArrayKind; length: number; offset: number }[];
}

const kindOf = (a: NumericArray): ArrayKind => (a instanceof Float32Array ? 'f32' : 'i32');
const align8 = (n: number): number => Math.ceil(n / 8) * 8;

export function packArtifact<M>(meta: M, arrays: Record<string, NumericArray | undefined>): Buffer {
  const present = Object.entries(arrays).filter((e): e is [string, NumericArray] => e[1] !== undefined);
  let offset = 0;
  const layout = present.map(([name, a]) => {
    const entry = { name, kind: kindOf(a), length: a.length, offset };
    offset += align8(a.byteLength);
    return entry;
  });
  const header = Buffer.from(JSON.stringify({ meta, arrays: layout } satisfies Header<M>));
  const start = align8(4 + header.length);
  const out = Buffer.alloc(start + offset);
  out.writeUInt32LE(header.length, 0);
  header.copy(out, 4);
  present.forEach(([, a], i) => Buffer.from(a.buffer, a.byteOffset, a.byteLength).copy(out, start + layout[i].offset));
  return out;
}

export function unpackArtifact<M>(bytes: Uint8Array, what: string): { meta: M; arrays: Record<string, NumericArray> } {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let header: Header<M>;
  try {
    const length = buf.readUInt32LE(0);
    header = JSON.parse(buf.subarray(4, 4 + length).toString('utf8')) as Header<M>;
    const start = align8(4 + length);
    const arrays: Record<string, NumericArray> = {};
    for (const a of header.arrays) {
      const from = start + a.offset;
      const end = from + a.length * CTORS[a.kind].BYTES_PER_ELEMENT;
      if (end > buf.length) throw new Error(`array ${a.name} runs past the end`);
      // A copy: the result must not alias the (possibly cached, unaligned) download buffer.
      const copy = buf.buffer.slice(buf.byteOffset + from, buf.byteOffset + end) as ArrayBuffer;
      arrays[a.name] = a.kind === 'f32' ? new Float32Array(copy) : new Int32Array(copy);
    }
    return { meta: header.meta, arrays };
  } catch (cause) {
    throw new CorruptDataError(`artifact ${what} cannot be decoded: ${(cause as Error).message}`, { cause });
  }
}
