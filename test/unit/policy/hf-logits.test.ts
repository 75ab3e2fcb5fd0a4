/**
 * Logits of model directories written by Hugging Face transformers (test/fixtures/hf-models, made by
 * scripts/hf_reference.py): starpo loads each directory and must produce transformers' logits within 1e-4 at
 * every attended position, and the float64 TypeScript reference's as well.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { createSession, floatTensor, int64Tensor } from '../../../src/policy/engine/session.ts';
import { weightFeeds } from '../../../src/policy/engine/feeds.ts';
import { Graph } from '../../../src/policy/graph/graph.ts';
import { type ModelDirectory, openModelDirectory } from '../../../src/policy/io/model-dir.ts';
import { buildLayout } from '../../../src/policy/model/layout.ts';
import { fromNamed } from '../../../src/policy/model/params.ts';
import { lmLogits, weightInputs } from '../../../src/policy/model/transformer.ts';
import { encode, sequenceInputs } from '../../../src/policy/programs/common.ts';
import { referenceLogits } from './reference.ts';

const FIXTURES = new URL('../../fixtures/hf-models/', import.meta.url).pathname;

interface LogitsCase {
  input_ids: number[][];
  attention_mask: number[][];
  position_ids: number[][];
  logits: number[][][];
}

async function starpoLogits(m: ModelDirectory, c: LogitsCase): Promise<Float32Array> {
  const [B, T] = [c.input_ids.length, c.input_ids[0].length];
  const layout = buildLayout(m.config);
  const g = new Graph('float32');
  const model = weightInputs(g, layout);
  g.output('logits', lmLogits(model, encode(model, sequenceInputs(g, B, T))));
  const session = await createSession(g, { threads: 1 });
  const packed = fromNamed(layout, Object.fromEntries(await m.readWeights())).packed;
  const out = await session.run({
    ...weightFeeds(layout, packed),
    tokens: int64Tensor(c.input_ids.flat(), [B, T]),
    positions: int64Tensor(c.position_ids.flat(), [B, T]),
    attention_mask: floatTensor(Float32Array.from(c.attention_mask.flat()), [B, T]),
  });
  await session.release();
  return out.logits.data as Float32Array;
}

for (const name of ['qwen2-tiny', 'qwen3-tiny', 'qwen3-tiny-bf16', 'llama3-tiny', 'llama3-tiny-sharded']) {
  test(`${name}: logits equal transformers' within 1e-4 at every attended position`, async () => {
    const m = await openModelDirectory(FIXTURES + name);
    const { cases } = JSON.parse(readFileSync(`${FIXTURES}${name}/logits.json`, 'utf8')) as { cases: LogitsCase[] };
    const weights = Object.fromEntries(await m.readWeights());
    for (const c of cases) {
      const ours = await starpoLogits(m, c);
      const V = m.config.vocabSize;
      const T = c.input_ids[0].length;
      let err = 0;
      let refErr = 0;
      c.input_ids.forEach((ids, b) => {
        const ref = referenceLogits(m.config, weights, ids, c.attention_mask[b]);
        for (let t = 0; t < T; t++) {
          if (!c.attention_mask[b][t]) continue;
          for (let v = 0; v < V; v++) {
            err = Math.max(err, Math.abs(ours[(b * T + t) * V + v] - c.logits[b][t][v]));
            refErr = Math.max(refErr, Math.abs(ref[t][v] - c.logits[b][t][v]));
          }
        }
      });
      assert.ok(err < 1e-4, `${name} ${c.input_ids.length}×${T}: max |Δ logit| vs transformers = ${err}`);
      assert.ok(refErr < 1e-4, `${name}: the float64 reference is ${refErr} from transformers`);
    }
  });
}

test(
  'directories the tests write (real 151,936 / 128,256-token vocabularies, BF16 and F32 shards) ' +
    'score like the float64 reference',
  { timeout: 300_000 },
  async () => {
    const { writeTinyModel } = await import('../rl/tiny-hf-model.ts');
    const dir = await mkdtemp(join(tmpdir(), 'starpo-tiny-'));
    try {
      for (const [name, o] of [
        ['qwen3', { dtype: 'BF16' }],
        ['llama3', { maxShardBytes: 6e6 }],
      ] as const) {
        const m = await openModelDirectory(await writeTinyModel(join(dir, name), name, o));
        const c: LogitsCase = {
          input_ids: [[9707, 11, 1879, 0, 128009, 220, 17, 100]],
          attention_mask: [new Array(8).fill(1)],
          position_ids: [[0, 1, 2, 3, 4, 5, 6, 7]],
          logits: [],
        };
        const ours = await starpoLogits(m, c);
        const ref = referenceLogits(
          m.config,
          Object.fromEntries(await m.readWeights()),
          c.input_ids[0],
          c.attention_mask[0],
        );
        const V = m.config.vocabSize;
        let err = 0;
        ref.forEach((row, t) =>
          row.forEach((x, v) => {
            err = Math.max(err, Math.abs(ours[t * V + v] - x));
          }),
        );
        assert.ok(err < 1e-4, `${name}: max |Δ logit| = ${err}`);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
);
