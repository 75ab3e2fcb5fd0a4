import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError } from '../../../src/errors.ts';
import { Policy } from '../../../src/policy/engine/policy.ts';
import { type Role, paramCount } from '../../../src/policy/model/layout.ts';
import type { LoraSpec } from '../../../src/policy/model/lora.ts';
import { mergeLora } from '../../../src/policy/model/merge.ts';
import { clonePacked, fromNamed, toNamed } from '../../../src/policy/model/params.ts';
import { rand, tinyModelConfig } from './gradcheck.ts';

const config = tinyModelConfig({ vocab_size: 20 });
const ALL: LoraSpec = { rank: 4, alpha: 8, dropout: 0, targets: ['q', 'k', 'v', 'o', 'gate', 'up', 'down'] };
const batch = {
  batch: 2,
  seqLen: 6,
  tokens: Int32Array.of(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12),
  attentionMask: Float32Array.of(0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1),
  lossMask: Float32Array.of(0, 0, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1),
};
const SFT = { loss: { kind: 'sft', aggregation: 'token-mean' }, lr: 0.02 } as const;
const bits = (a: Float32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

test('LoRA options are checked: dropout other than 0, rank < 1, alpha <= 0, empty, unknown or repeated targets name their field', () => {
  const cases: [Partial<Record<keyof LoraSpec, unknown>>, string][] = [
    [{ dropout: 0.05 }, 'lora.dropout'],
    [{ rank: 0 }, 'lora.rank'],
    [{ rank: 1.5 }, 'lora.rank'],
    [{ alpha: 0 }, 'lora.alpha'],
    [{ targets: [] }, 'lora.targets'],
    [{ targets: ['qkv'] }, 'lora.targets'],
    [{ targets: ['q', 'q'] }, 'lora.targets'],
  ];
  for (const [bad, field] of cases) {
    assert.throws(
      () => new Policy({ config, lora: { ...ALL, ...bad } as LoraSpec }),
      (e: unknown) => e instanceof ConfigError && e.field === field,
      field,
    );
  }
  assert.equal(new Policy({ config, lora: ALL }).layout.lora, ALL);
});

test('a fresh LoRA policy (B = 0) scores and samples exactly like the base policy with the same weights', async () => {
  const plain = new Policy({ config, seed: 3, threads: 1 });
  const lora = new Policy({ config, seed: 8, threads: 1, lora: ALL });
  assert.deepEqual(lora.setBase(toNamed(plain.layout, plain.getParams())), { unused: [] });
  const [a, b] = [await plain.score(batch), await lora.score(batch)];
  assert.ok(bits(a.logprobs!).equals(bits(b.logprobs!)) && bits(a.entropy!).equals(bits(b.entropy!)));
  const req = { prompts: [[1, 2, 3], [4]], maxNewTokens: 6, sampling: { temperature: 1 }, seed: 4 };
  assert.deepEqual(await lora.generate(req), await plain.generate(req));
  await Promise.all([plain.close(), lora.close()]);
});

test('LoRA train steps leave the base bit-identical, change only adapters, and keep AdamW moments for the adapters alone', async () => {
  const policy = new Policy({ config, seed: 3, threads: 1, lora: ALL });
  const base = clonePacked(policy.getBase()!);
  for (let i = 0; i < 3; i++) await policy.trainStep(batch, SFT);
  assert.ok(
    bits(policy.getBase()!.matrices).equals(bits(base.matrices)) &&
      bits(policy.getBase()!.vectors).equals(bits(base.vectors)),
  );
  const trained = toNamed(policy.layout, policy.getParams());
  assert.equal(Object.keys(trained).length, 2 * 7 * config.numLayers);
  assert.ok(
    Object.keys(trained).every((n) =>
      /^base_model\.model\.model\.layers\.\d\.(self_attn|mlp)\.\w+_proj\.lora_[AB]\.weight$/.test(n),
    ),
  );
  assert.ok(
    Object.entries(trained).every(([n, t]) => !n.includes('lora_B') || t.data.some((x) => x !== 0)),
    'every B has moved off 0',
  );
  const { m, v } = policy.getMoments()!;
  for (const p of [policy.getParams(), m, v])
    assert.deepEqual([p.matrices.length, p.vectors.length], [paramCount(policy.layout), 0]);
  assert.equal(policy.step, 3);
  await policy.close();
});

test("merged weights (W + scale·B·A) in a plain policy give the LoRA policy's log-probs and values within 1e-5", async () => {
  const cases: [Role, LoraSpec][] = [
    ['actor', ALL],
    ['critic', { rank: 3, alpha: 2, dropout: 0, targets: ['up', 'k'] }],
  ];
  for (const [role, spec] of cases) {
    const lora = new Policy({ config, role, seed: 5, threads: 1, lora: spec });
    lora.setParams({
      matrices: Float32Array.from(rand(lora.layout.groups.matrices, 3, -0.3, 0.3)),
      vectors: lora.getParams().vectors,
    });
    const out = async (p: Policy) => ((r) => r.logprobs ?? r.values!)(await p.score(batch));
    const plain = new Policy({ config, role, threads: 1 });
    plain.setParams(
      fromNamed(plain.layout, {
        ...toNamed(lora.layout.frozen!, lora.getBase()!),
        ...toNamed(lora.layout, lora.getParams()),
      }).packed,
    );
    const maxDiff = (x: Float32Array, y: Float32Array) => x.reduce((e, xi, i) => Math.max(e, Math.abs(xi - y[i])), 0);
    const [adapted, unmerged] = [await out(lora), await out(plain)];
    plain.setParams(fromNamed(plain.layout, mergeLora(lora.layout, lora.getBase()!, lora.getParams())).packed);
    const merged = await out(plain);
    assert.ok(maxDiff(adapted, unmerged) > 1e-2, `${role}: the adapters change the outputs`);
    assert.ok(maxDiff(adapted, merged) < 1e-5, `${role}: max error ${maxDiff(adapted, merged)}`);
    await Promise.all([lora.close(), plain.close()]);
  }
});
