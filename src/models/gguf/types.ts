/**
 * ggml's tensor types as GGUF stores them: id, block size (weights per block) and block bytes, for the types
 * starpo dequantises (dequant.ts); every other id is named in the error, so a user learns which type their
 * file uses rather than a number. Sizes are ggml-common.h's block layouts.
 */
import { CorruptDataError, ConfigError } from '../../errors.ts';

export interface GgmlType {
  readonly id: number;
  readonly blockSize: number;
  readonly blockBytes: number;
}

export const GGML_TYPES = {
  F32: { id: 0, blockSize: 1, blockBytes: 4 },
  F16: { id: 1, blockSize: 1, blockBytes: 2 },
  Q4_0: { id: 2, blockSize: 32, blockBytes: 18 },
  Q4_1: { id: 3, blockSize: 32, blockBytes: 20 },
  Q5_0: { id: 6, blockSize: 32, blockBytes: 22 },
  Q5_1: { id: 7, blockSize: 32, blockBytes: 24 },
  Q8_0: { id: 8, blockSize: 32, blockBytes: 34 },
  Q2_K: { id: 10, blockSize: 256, blockBytes: 84 },
  Q3_K: { id: 11, blockSize: 256, blockBytes: 110 },
  Q4_K: { id: 12, blockSize: 256, blockBytes: 144 },
  Q5_K: { id: 13, blockSize: 256, blockBytes: 176 },
  Q6_K: { id: 14, blockSize: 256, blockBytes: 210 },
  BF16: { id: 30, blockSize: 1, blockBytes: 2 },
} as const satisfies Record<string, GgmlType>;

export type GgmlTypeName = keyof typeof GGML_TYPES;

/** ggml's names for the ids starpo does not read (gguf's GGMLQuantizationType). */
const OTHER_TYPES: Readonly<Record<number, string>> = {
  9: 'Q8_1',
  15: 'Q8_K',
  16: 'IQ2_XXS',
  17: 'IQ2_XS',
  18: 'IQ3_XXS',
  19: 'IQ1_S',
  20: 'IQ4_NL',
  21: 'IQ3_S',
  22: 'IQ2_S',
  23: 'IQ4_XS',
  24: 'I8',
  25: 'I16',
  26: 'I32',
  27: 'I64',
  28: 'F64',
  29: 'IQ1_M',
  34: 'TQ1_0',
  35: 'TQ2_0',
  39: 'MXFP4',
  40: 'NVFP4',
  41: 'Q1_0',
};

const BY_ID = new Map<number, GgmlTypeName>(
  (Object.keys(GGML_TYPES) as GgmlTypeName[]).map((name) => [GGML_TYPES[name].id, name]),
);

export function ggmlTypeOf(id: number, tensor: string, source: string): GgmlTypeName {
  const name = BY_ID.get(id);
  if (name) return name;
  const known = OTHER_TYPES[id];
  if (known === undefined) throw new CorruptDataError(`${source}: tensor ${tensor} has unknown ggml type id ${id}`);
  throw new ConfigError(
    'model',
    `${source}: tensor ${tensor} is quantised as ${known}, which starpo cannot dequantise ` +
      `(supported: ${Object.keys(GGML_TYPES).join(', ')})`,
  );
}

/** Bytes of a tensor of `dims` (ggml order) stored as `type`; its rows must be whole blocks. */
export function tensorBytes(type: GgmlTypeName, dims: readonly number[], tensor: string, source: string): number {
  const { blockSize, blockBytes } = GGML_TYPES[type];
  const rowLength = dims[0] ?? 1;
  if (rowLength % blockSize !== 0)
    throw new CorruptDataError(
      `${source}: tensor ${tensor} rows of ${rowLength} are not whole ${type} blocks of ${blockSize}`,
    );
  let n = 1;
  for (const d of dims) n *= d;
  return (n / blockSize) * blockBytes;
}
