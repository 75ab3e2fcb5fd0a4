/**
 * Rows sharing a prompt packed into one row (packPrefixes): the layout (programs/prefix-pack.ts), and a policy that
 * scores and trains packed batches as it does the rows apart, to float rounding.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { PACK_MIN_PARAMS, Policy } from '../../../src/policy/engine/policy.ts';
import { paramCount } from '../../../src/policy/model/layout.ts';
import { parseModelConfig } from '../../../src/policy/io/config.ts';
import { PROMPT, ROWS, T, assertWithin, batch, flat } from './shared-prompt-batch.ts';
import { tinyConfig } from './tiny-config.ts';
import { DEFAULT_ADAMW } from '../../../src/policy/programs/adamw.ts';
import { DEFAULT_VALUE_LOSS, STARPO_S_PPO } from '../../../src/policy/programs/loss.ts';
import {
  MIN_SHARED_PREFIX,
  PACKED_ROW_TOKENS,
  packSharedPrefixes,
  unpack,
} from '../../../src/policy/programs/prefix-pack.ts';

test('a group sharing a prompt becomes one row: the prefix once, then each member; the others stay rows', () => {
  const pack = packSharedPrefixes(batch)!;
  const b = pack.batch;
  // The prefix stops one token before the first trained token (24): 23 tokens, then 7 + 10 + 5 of the members.
  assert.equal(b.batch, 2);
  assert.equal(b.seqLen, 23 + 7 + 10 + 5);
  const row0 = Array.from(b.tokens.subarray(0, b.seqLen));
  assert.deepEqual(row0, [
    ...PROMPT,
    ...ROWS[0].slice(24),
    PROMPT[23],
    ...ROWS[1].slice(24),
    PROMPT[23],
    ...ROWS[2].slice(24),
  ]);
  assert.deepEqual(Array.from(b.segments.subarray(0, b.seqLen)), [
    ...Array(23).fill(0),
    ...Array(7).fill(1),
    ...Array(10).fill(2),
    ...Array(5).fill(3),
  ]);
  assert.deepEqual(Array.from(b.positions.subarray(23, 23 + 7 + 2)), [23, 24, 25, 26, 27, 28, 29, 23, 24]);
  // described: what the position before predicts; the second member's first index follows the first's end.
  assert.equal(b.described[23], PROMPT[23]);
  assert.equal(b.described[30], 0);
  assert.equal(b.described[31], ROWS[1][24]);
  // Every original token maps to the index that computes it: the shared ones to the prefix, the rest to segments.
  for (let r = 0; r < ROWS.length; r++)
    for (let t = 1; t < ROWS[r].length; t++) {
      const j = pack.toPacked[r * T + t];
      assert.equal(b.described[j], ROWS[r][t], `row ${r} token ${t}`);
      assert.equal(b.lossMask[j], batch.lossMask[r * T + t]);
      // Per-token inputs come from the row the index describes; in the prefix (never trained) from the first member.
      if (batch.lossMask[r * T + t] > 0) assert.equal(b.advantages![j], batch.advantages![r * T + t]);
    }
  assert.equal(pack.toPacked[0], -1);
  assert.equal(pack.toPacked[30], -1, 'padding');
  // The lone row is a row of its own: one segment, its own positions, nothing shared.
  assert.deepEqual(Array.from(b.tokens.subarray(b.seqLen, b.seqLen + 30)), ROWS[3]);
  assert.ok(b.segments.subarray(b.seqLen, b.seqLen + 30).every((s) => s === 1));
});

test('nothing is packed when no group shares MIN_SHARED_PREFIX tokens before its first trained token', () => {
  const early = { ...batch, lossMask: Float32Array.from(flat((_row, _r, t) => (t >= MIN_SHARED_PREFIX ? 1 : 0))) };
  assert.equal(packSharedPrefixes(early), null);
  assert.equal(packSharedPrefixes({ ...batch, batch: 1 }), null, 'one row');
  const left = { ...batch, attentionMask: Float32Array.from(flat((_row, _r, t) => (t === 0 ? 0 : 1))) };
  assert.equal(packSharedPrefixes(left), null, 'left padding is not packed');
  assert.deepEqual(Array.from(unpack(Float32Array.of(5, 6, 7), Int32Array.of(2, -1, 0))), [7, 0, 5]);
});

test('groups that share only a system prompt pack apart, each with its whole prompt; a packed row has a cap', () => {
  const system = Array.from({ length: 20 }, (_, i) => i + 1);
  const rows = [0, 1, 2, 3, 4, 5].map((i) => [...system, ...Array(10).fill(100 + (i % 2)), 200 + i, 201, 202]);
  const L = rows[0].length;
  const b = {
    batch: 6,
    seqLen: L,
    tokens: Int32Array.from(rows.flat()),
    attentionMask: new Float32Array(6 * L).fill(1),
    lossMask: Float32Array.from(rows.flatMap(() => Array.from({ length: L }, (_, t) => (t >= 30 ? 1 : 0)))),
  };
  const pack = packSharedPrefixes(b)!;
  assert.equal(pack.batch.batch, 2, 'one packed row per prompt, not one for the system prompt');
  assert.equal(pack.batch.seqLen, 29 + 3 * 4);
  // 60 rows of one prompt: the cap (1024, or twice the longest row) cuts them into several packed rows.
  const many = Array.from({ length: 60 }, (_, i) => [...Array(300).fill(7), ...Array(30).fill(300 + i)]);
  const big = {
    batch: 60,
    seqLen: 330,
    tokens: Int32Array.from(many.flat()),
    attentionMask: new Float32Array(60 * 330).fill(1),
  };
  const cut = packSharedPrefixes(big)!.batch;
  assert.ok(cut.seqLen <= PACKED_ROW_TOKENS && cut.batch === 3, `${cut.batch} rows of ${cut.seqLen}`);
});

test("a score call packs a prompt's rows as one family up to its first read position, whatever their answers share", () => {
  // The collapse probe scores answers after a prompt: two answers open alike, the third does not. Without a mask
  // the prefix may run into the answers, and the third (sharing less) starts a family of its own, repeating the
  // prompt; with the head mask on the answers the prefix stops at the prompt and the three pack as one row.
  const rows = [
    [...PROMPT, 1, 2, 3, 4],
    [...PROMPT, 1, 2, 5, 6],
    [...PROMPT, 7, 8, 9],
  ];
  const L = 28;
  const tokens = Int32Array.from(rows.flatMap((r) => [...r, ...Array(L - r.length).fill(0)]));
  const real = rows.flatMap((r) => Array.from({ length: L }, (_, t) => (t < r.length ? 1 : 0)));
  const b = { batch: 3, seqLen: L, tokens, attentionMask: Float32Array.from(real) };
  assert.equal(packSharedPrefixes(b)!.batch.batch, 2, "unmasked: the answers' openings split the family");
  const headMask = Float32Array.from(real.map((x, i) => (i % L >= PROMPT.length ? x : 0)));
  const packed = packSharedPrefixes({ ...b, headMask })!.batch;
  assert.equal(packed.batch, 1);
  assert.equal(packed.seqLen, PROMPT.length - 1 + 5 + 5 + 4);
});

test('a packed row shares the longest prefix its own members allow, not that of the first pair of its family', () => {
  // A row of one prompt sorts beside a group of another that shares only the 100-token system prompt with it: the
  // family's prefix is 99, but the group's rows packed apart from that row share their whole 230-token prompt.
  const system = Array.from({ length: 100 }, (_, i) => i + 1);
  const prompt = (p: number) => [...system, ...Array.from({ length: 130 }, (_, i) => 1000 * p + i)];
  const rows = [
    [...prompt(1), ...Array(60).fill(5)],
    ...Array.from({ length: 8 }, (_, i) => [...prompt(2), ...Array.from({ length: 60 }, (_, t) => 9000 + 60 * i + t)]),
  ];
  const L = Math.max(...rows.map((r) => r.length));
  const b = {
    batch: rows.length,
    seqLen: L,
    tokens: Int32Array.from(rows.flat()),
    attentionMask: new Float32Array(rows.length * L).fill(1),
    lossMask: Float32Array.from(rows.flatMap(() => Array.from({ length: L }, (_, t) => (t >= 230 ? 1 : 0)))),
  };
  for (const pairCost of [0, 6.7e-4]) {
    const packed = packSharedPrefixes(b, { pairCost })!.batch;
    const prefixes = Array.from({ length: packed.batch }, (_, p) => {
      const seg = packed.segments.subarray(p * packed.seqLen, (p + 1) * packed.seqLen);
      const first = seg.findIndex((x) => x !== 0);
      return seg[0] === 0 && first > 1 ? first : 0; // 0: a row of its own (segment 1 throughout)
    });
    assert.ok(prefixes.includes(229), `pairCost ${pairCost}: prefixes ${prefixes.join(', ')}`);
  }
});

test('with a pair cost, a group is cut into the packed rows that cost least once padded, not filled to the cap', () => {
  // FrozenLake's kept group (SmolLM2, 2026-12-07): a 230-token prompt, then 8 answers and later turns of 13–379 tokens.
  const tails = [93, 289, 205, 13, 374, 105, 198, 379];
  const rows = tails.map((n, i) => [...Array(230).fill(7), ...Array.from({ length: n }, (_, t) => 1000 + 400 * i + t)]);
  const L = Math.max(...rows.map((r) => r.length));
  const b = {
    batch: rows.length,
    seqLen: L,
    tokens: Int32Array.from(rows.flatMap((r) => [...r, ...Array(L - r.length).fill(0)])),
    attentionMask: Float32Array.from(rows.flatMap((r) => Array.from({ length: L }, (_, t) => (t < r.length ? 1 : 0)))),
    lossMask: Float32Array.from(
      rows.flatMap((r) => Array.from({ length: L }, (_, t) => (t >= 230 && t < r.length ? 1 : 0))),
    ),
  };
  const cost = (p: { batch: number; seqLen: number }, pairCost: number) => {
    const padded = Math.ceil(p.seqLen / 32) * 32;
    return p.batch * (padded + pairCost * padded * padded);
  };
  const pairCost = 6.7e-4; // SmolLM2-135M's (packPairCost)
  const filled = packSharedPrefixes(b)!.batch;
  const chosen = packSharedPrefixes(b, { pairCost })!.batch;
  assert.deepEqual([filled.batch, filled.seqLen], [2, 1208], 'filled to the cap (twice the longest row)');
  assert.deepEqual([chosen.batch, chosen.seqLen], [3, 819]);
  assert.ok(cost(chosen, pairCost) < 0.9 * cost(filled, pairCost));
  assert.ok(cost(chosen, pairCost) < cost({ batch: 8, seqLen: L }, pairCost), 'and less than the rows apart');
  // Every token still maps to a packed index describing it.
  const pack = packSharedPrefixes(b, { pairCost })!;
  rows.forEach((r, i) => {
    for (let t = 1; t < r.length; t++) assert.equal(pack.batch.described[pack.toPacked[i * L + t]], r[t]);
  });
});

const config = tinyConfig('qwen2', 0.05);
const policies: Policy[] = [];
const make = (role: 'actor' | 'critic', packPrefixes: boolean, lora = false) => {
  const p = new Policy({
    config,
    role,
    seed: 5,
    threads: 1,
    packPrefixes,
    ...(lora ? { lora: { rank: 2, alpha: 4, dropout: 0, targets: ['q', 'v', 'up'] } } : {}),
  });
  policies.push(p);
  return p;
};
after(() => Promise.all(policies.map((p) => p.close())));

const close = assertWithin;

test('packed scoring gives the rows-apart log-probs, entropies and values to float rounding', async () => {
  for (const role of ['actor', 'critic'] as const) {
    const [apart, packed] = [make(role, false), make(role, true)];
    const [a, p] = [await apart.score(batch), await packed.score(batch)];
    const real = (x: Float32Array) => x.filter((_, i) => batch.attentionMask[i] > 0 && i % T > 0);
    for (const n of Object.keys(a) as (keyof typeof a)[]) close(real(p[n]!), real(a[n]!), 1e-5, `${role} ${n}`);
  }
});

test('a packed train step takes the rows-apart gradient to float rounding (actor PPO, critic, LoRA)', async () => {
  const cases = [
    { role: 'actor', loss: STARPO_S_PPO, lora: false },
    { role: 'critic', loss: DEFAULT_VALUE_LOSS, lora: false },
    { role: 'actor', loss: STARPO_S_PPO, lora: true },
  ] as const;
  // With eps ≫ |g| and no clipping or decay, Adam's first step moves each weight by −lr · g / (|g| + eps) ≈ −g:
  // the weights' change is the gradient (Adam's usual ±lr first step would blow near-zero gradients' noise up).
  const optim = { ...DEFAULT_ADAMW, eps: 1, weightDecay: 0, maxGradNorm: null };
  for (const c of cases) {
    const [apart, packed] = [make(c.role, false, c.lora), make(c.role, true, c.lora)];
    const before = apart.getParams().matrices.slice();
    const opts = { loss: c.loss, lr: 1, optim };
    const [ma, mp] = [await apart.trainStep(batch, opts), await packed.trainStep(batch, opts)];
    const what = `${c.role}${c.lora ? ' LoRA' : ''}`;
    close([mp.loss, mp.grad_norm, mp.tokens], [ma.loss, ma.grad_norm, ma.tokens], 1e-4, `${what} metrics`);
    const [da, dp] = [apart, packed].map((p) => p.getParams().matrices.map((x, i) => x - before[i]));
    const scale = Math.max(...da.map(Math.abs));
    assert.ok(scale > 1e-6, `${what}: the step moved nothing`);
    const worst = Math.max(...dp.map((x, i) => Math.abs(x - da[i])));
    assert.ok(worst <= 1e-3 * scale, `${what}: gradients differ by ${worst} (largest ${scale})`);
    assert.ok(worst > 0, `${what}: the packed step ran the rows-apart arithmetic`);
  }
});

test('seq-mean losses train the rows apart (a packed row holds several sequences)', async () => {
  const [apart, packed] = [make('actor', false), make('actor', true)];
  const opts = { loss: { ...STARPO_S_PPO, aggregation: 'seq-mean-token-mean' }, lr: 1e-2 } as const;
  assert.deepEqual(await packed.trainStep(batch, opts), await apart.trainStep(batch, opts));
  assert.deepEqual(packed.getParams().matrices, apart.getParams().matrices);
});

test('by default only models of PACK_MIN_PARAMS or more pack: a tiny one scores as rows apart, a 36M one packed', async () => {
  const large = parseModelConfig({
    model_type: 'qwen2',
    vocab_size: 300,
    hidden_size: 1024,
    intermediate_size: 10240,
    num_hidden_layers: 1,
    num_attention_heads: 4,
    num_key_value_heads: 2,
    initializer_range: 0.02,
  });
  for (const [cfg, packs] of [
    [config, false],
    [large, true],
  ] as const) {
    const [auto, on, off] = [undefined, true, false].map((packPrefixes) => {
      const p = new Policy({
        config: cfg,
        seed: 5,
        threads: 1,
        ...(packPrefixes === undefined ? {} : { packPrefixes }),
      });
      policies.push(p);
      return p;
    });
    const params = paramCount(auto.layout);
    assert.equal(params >= PACK_MIN_PARAMS, packs, `${params} parameters`);
    const [a, same, other] = await Promise.all((packs ? [auto, on, off] : [auto, off, on]).map((p) => p.score(batch)));
    assert.deepEqual(a.logprobs, same.logprobs, `${params} parameters: auto is not ${packs ? 'packed' : 'apart'}`);
    assert.notDeepEqual(a.logprobs, other.logprobs, `${params} parameters: packed and apart gave the same bits`);
  }
});
