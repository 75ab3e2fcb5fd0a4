/**
 * Program inputs from TypeScript data: parameter views, packed groups, and padded sequence
 * batches in the row alignment the graphs use (see programs/batch.ts).
 */
import { ConfigError } from '../../errors.ts';
import { GROUPS, type Layout } from '../model/layout.ts';
import type { Packed } from '../model/params.ts';
import { type Bucket, type SequenceBatch, place, placeInt, positionsOf } from '../programs/batch.ts';
import type { HeadRows } from '../programs/head-rows.ts';
import { isPacked } from '../programs/prefix-pack.ts';
import { type Session, type OrtTensor, floatTensor, scalarTensor, tensor } from './session.ts';

export type Feeds = Record<string, OrtTensor>;

/**
 * One zero-copy tensor per parameter view (`w.<key>`), over the packed buffers: the trained ones
 * from `p` and, with LoRA, the frozen base's from `frozen`.
 */
export function weightFeeds(layout: Layout, p: Packed, frozen: Packed | null = null): Feeds {
  const views = (l: Layout, packed: Packed) =>
    l.views.map((v) => [`w.${v.key}`, floatTensor(packed[v.group].subarray(v.offset, v.offset + v.size), v.shape)]);
  if (layout.frozen && !frozen) throw new ConfigError('lora', 'the frozen base weights are not set');
  return Object.fromEntries([...(layout.frozen ? views(layout.frozen, frozen!) : []), ...views(layout, p)]);
}

/** `<prefix>_matrices` and `<prefix>_vectors` over whole packed groups (zero-copy); empty groups have no input. */
export function packedFeeds(prefix: string, p: Packed): Feeds {
  return Object.fromEntries(
    GROUPS.filter((g) => p[g].length > 0).map((g) => [`${prefix}_${g}`, floatTensor(p[g], [p[g].length])]),
  );
}

/**
 * tokens, targets (next tokens), positions, attention mask and 1/T for a batch padded to `bucket`; a packed batch
 * (programs/prefix-pack.ts) brings its own targets (`described`), positions and segments; `heads`, the positions the
 * LM head runs on (programs/head-rows.ts).
 */
export function sequenceFeeds(batch: SequenceBatch, bucket: Bucket, temperature = 1, heads?: HeadRows | null): Feeds {
  const shape = [bucket.batch, bucket.seqLen];
  const mask = place(batch.attentionMask, batch, bucket, 0, 'float32');
  const packed = isPacked(batch) ? batch : null;
  return {
    tokens: tensor('int64', shape, placeInt(batch.tokens, batch, bucket, 0)),
    targets: tensor('int64', shape, placeInt(packed?.described ?? batch.tokens, batch, bucket, 1)),
    positions: tensor(
      'int64',
      shape,
      packed ? placeInt(packed.positions, batch, bucket, 0) : positionsOf(mask, bucket.batch, bucket.seqLen),
    ),
    ...(packed ? { segments: tensor('int64', shape, placeInt(packed.segments, batch, bucket, 0)) } : {}),
    ...(heads
      ? {
          head_rows: tensor('int64', [heads.rows.length], heads.rows),
          head_inverse: tensor('int64', [heads.inverse.length], heads.inverse),
        }
      : {}),
    attention_mask: floatTensor(mask, shape),
    inv_temperature: scalarTensor(1 / temperature, 'float32'),
  };
}

/** A per-token caller array shifted into row alignment (row t about token t+1) and padded. */
export function rowFeed(values: ArrayLike<number>, batch: SequenceBatch, bucket: Bucket): OrtTensor {
  return floatTensor(place(values, batch, bucket, 1, 'float32'), [bucket.batch, bucket.seqLen]);
}

/** The feeds a session declares (programs differ: a critic has no targets or temperature). */
export function only(session: Session, feeds: Feeds): Feeds {
  return Object.fromEntries(session.inputNames.map((n) => [n, feeds[n]]));
}
