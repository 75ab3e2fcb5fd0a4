// The device checks of scripts/gpu-check.sh, as JSON lines on stdout (one per check, then a summary):
//   node --import tsx scripts/gpu-check.ts [cuda|webgpu|cpu] [--scale 0.5b|quick]
// Each check runs the same work on the provider and on the CPU and compares, or times the provider:
//   gradient      loss + autodiff gradients of a 2-layer actor (PPO loss) in float32, device vs CPU
//   train_step    one AdamW step of a 2-layer actor through Policy, device vs CPU (loss, grad norm, new weights)
//   generate      new tokens/s of a ~3M-parameter model, 64 prompts, greedy, and how many tokens equal the CPU's
//   scale_*       Qwen2.5-0.5B shape (random init): one train_step on 2x256 tokens and a decode step, timed
// `--scale quick` swaps the 0.5B shape for a 4-layer, width-256 one (a dry run of the script on a CPU machine).
import { grad } from '../src/policy/autodiff/grad.ts';
import { Policy } from '../src/policy/engine/policy.ts';
import { type Provider, type OrtTensor, createSession, tensor } from '../src/policy/engine/session.ts';
import { Graph } from '../src/policy/graph/graph.ts';
import { type ModelConfig, parseModelConfig } from '../src/policy/io/config.ts';
import { QWEN25_05B_CONFIG } from '../src/policy/io/published-configs.ts';
import { BENCH_MODEL } from '../src/bench/engine.ts';
import { GROUPS, buildLayout, paramCount } from '../src/policy/model/layout.ts';
import { initParams } from '../src/policy/model/params.ts';
import { DEFAULT_ADAMW } from '../src/policy/programs/adamw.ts';
import { positionsOf, type TrainBatch } from '../src/policy/programs/batch.ts';
import type { LossSpec } from '../src/policy/programs/loss.ts';
import { buildLoss } from '../src/policy/programs/train.ts';

const emit = (line: Record<string, unknown>): void => void process.stdout.write(`${JSON.stringify(line)}\n`);
const round = (x: number, d = 4): number => Number(x.toPrecision(d));
const seconds = async <T>(fn: () => Promise<T>): Promise<[T, number]> => {
  const t0 = performance.now();
  const r = await fn();
  return [r, (performance.now() - t0) / 1000];
};

/** float32 tolerance, relative to the largest magnitude: cuBLAS may use TF32 for float32 products (10-bit mantissa). */
const TOLERANCE = 2e-3;

const TINY = parseModelConfig({
  model_type: 'qwen2',
  vocab_size: 11,
  hidden_size: 16,
  intermediate_size: 24,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  initializer_range: 0.3,
  tie_word_embeddings: false,
});
const SCALES: Record<string, ModelConfig> = {
  '0.5b': parseModelConfig(QWEN25_05B_CONFIG),
  quick: parseModelConfig({
    ...QWEN25_05B_CONFIG,
    hidden_size: 256,
    num_hidden_layers: 4,
    max_window_layers: 4,
    num_attention_heads: 4,
    intermediate_size: 1024,
  }),
};

/** Largest |a - b| over the largest |b|: one number per tensor pair, scale-free. */
function relDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let [diff, scale] = [0, 1e-12];
  for (let i = 0; i < b.length; i++)
    [diff, scale] = [Math.max(diff, Math.abs(a[i] - b[i])), Math.max(scale, Math.abs(b[i]))];
  return diff / scale;
}

const rand = (n: number, seed: number, lo: number, hi: number): Float32Array => {
  let s = seed >>> 0 || 1;
  return Float32Array.from(
    { length: n },
    () => ((s ^= s << 13), (s ^= s >>> 17), (s ^= s << 5), lo + ((s >>> 0) / 2 ** 32) * (hi - lo)),
  );
};

/** The feeds of the 2-layer PPO loss: row 0 left-padded by two tokens, row 1 trains three predictions. */
function ppoFeeds(B: number, T: number): Record<string, OrtTensor> {
  const mask = Float32Array.from([0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]);
  const f = (d: Float32Array): OrtTensor => tensor('float32', [B, T], d);
  const ids = (xs: number[]): OrtTensor => tensor('int64', [B, T], BigInt64Array.from(xs.map(BigInt)));
  return {
    tokens: ids([0, 0, 3, 7, 1, 9, 4, 4, 2, 10, 5, 6]),
    targets: ids([0, 3, 7, 1, 9, 0, 4, 2, 10, 5, 6, 0]),
    positions: tensor('int64', [B, T], positionsOf(mask, B, T)),
    attention_mask: f(mask),
    loss_mask: f(Float32Array.from([0, 0, 1, 1, 1, 0, 0, 0, 1, 1, 1, 0])),
    advantages: f(rand(B * T, 3, -1, 1)),
    old_logprobs: f(rand(B * T, 4, -2.8, -2)),
    ref_logprobs: f(rand(B * T, 5, -2.8, -2)),
    inv_temperature: tensor('float32', [], Float32Array.of(1 / 0.7)),
    token_count: tensor('float32', [], Float32Array.of(6)),
    sequence_count: tensor('float32', [], Float32Array.of(2)),
  };
}

async function gradientCheck(provider: Provider): Promise<Record<string, unknown>> {
  const [B, T] = [2, 6];
  const loss: LossSpec = {
    kind: 'ppo',
    clipLow: 0.2,
    clipHigh: 0.28,
    dualClip: 3,
    entropyCoef: 0.01,
    kl: { coef: 0.1, estimator: 'k3' },
    aggregation: 'token-mean',
  };
  const layout = buildLayout(TINY, 'actor');
  const init = initParams(layout, 17);
  const g = new Graph();
  const ws = layout.views.map((v) => g.input(`w.${v.key}`, 'float32', v.shape));
  const out = buildLoss(
    g,
    { cfg: TINY, w: Object.fromEntries(layout.views.map((v, i) => [v.key, ws[i]])) },
    { batch: B, seqLen: T, loss, optim: DEFAULT_ADAMW },
  ).loss;
  g.output('loss', out);
  grad(out, ws).forEach((gv, i) => g.output(`grad_${i}`, gv));
  const feeds = {
    ...ppoFeeds(B, T),
    ...Object.fromEntries(
      layout.views.map((v) => [
        `w.${v.key}`,
        tensor('float32', v.shape, init[v.group].slice(v.offset, v.offset + v.size)),
      ]),
    ),
  };
  const run = async (p: Provider) => (await createSession(g, { provider: p, threads: 1 })).run(feeds);
  const [dev, cpu] = [await run(provider), await run('cpu')];
  const worst = Math.max(
    ...Object.keys(cpu).map((k) => relDiff(dev[k].data as Float32Array, cpu[k].data as Float32Array)),
  );
  return {
    check: 'gradient',
    outputs: Object.keys(cpu).length,
    maxRelDiff: round(worst),
    tolerance: TOLERANCE,
    ok: worst <= TOLERANCE,
  };
}

function sftBatch(B: number, T: number, vocab: number): TrainBatch {
  const n = B * T;
  const tokens = Int32Array.from({ length: n }, (_, i) => (i * 7919 + 13) % vocab);
  return {
    batch: B,
    seqLen: T,
    tokens,
    attentionMask: new Float32Array(n).fill(1),
    lossMask: new Float32Array(n).fill(1),
  };
}

async function trainStepCheck(provider: Provider): Promise<Record<string, unknown>> {
  const batch = sftBatch(4, 32, TINY.vocabSize);
  const opts = { loss: { kind: 'sft', aggregation: 'token-mean' }, lr: 1e-3 } as const;
  const step = async (p: Provider) => {
    const policy = new Policy({ config: TINY, seed: 5, provider: p, threads: 1 });
    const before = GROUPS.map((k) => policy.getParams()[k].slice());
    const metrics = await policy.trainStep(batch, opts);
    const after = policy.getParams();
    await policy.close();
    return { metrics, delta: GROUPS.map((k, i) => after[k].map((x, j) => x - before[i][j])) };
  };
  const [dev, cpu] = [await step(provider), await step('cpu')];
  const lossDiff = Math.abs(dev.metrics.loss - cpu.metrics.loss) / Math.abs(cpu.metrics.loss);
  const normDiff = Math.abs(dev.metrics.grad_norm - cpu.metrics.grad_norm) / cpu.metrics.grad_norm;
  // AdamW's first step moves each weight by about lr·sign(g): compare the updates, not the weights.
  const updateDiff = Math.max(...dev.delta.map((d, i) => relDiff(d, cpu.delta[i])));
  const ok = lossDiff <= TOLERANCE && normDiff <= TOLERANCE && updateDiff <= 10 * TOLERANCE;
  return {
    check: 'train_step',
    loss: round(dev.metrics.loss, 7),
    cpuLoss: round(cpu.metrics.loss, 7),
    lossRelDiff: round(lossDiff),
    gradNormRelDiff: round(normDiff),
    updateRelDiff: round(updateDiff),
    ok,
  };
}

async function generateCheck(provider: Provider): Promise<Record<string, unknown>> {
  const prompts = Array.from({ length: 64 }, (_, r) => Array.from({ length: 32 }, (_, i) => (r * 31 + i * 7) % 256));
  const req = { prompts, maxNewTokens: 64 };
  const gen = async (p: Provider) => {
    const policy = new Policy({ config: BENCH_MODEL, seed: 1, provider: p });
    await policy.generate({ prompts: prompts.slice(0, 8), maxNewTokens: 4 }); // compile and warm up
    const [out, s] = await seconds(() => policy.generate(req));
    await policy.close();
    return { tokens: out.flatMap((o) => o.tokens), s };
  };
  const [dev, cpu] = [await gen(provider), await gen('cpu')];
  const same = dev.tokens.filter((t, i) => t === cpu.tokens[i]).length / Math.max(1, cpu.tokens.length);
  return {
    check: 'generate',
    rows: 64,
    newTokens: dev.tokens.length,
    tokensPerSecond: round(dev.tokens.length / dev.s),
    cpuTokensPerSecond: round(cpu.tokens.length / cpu.s),
    sameTokensAsCpu: round(same, 3),
    ok: dev.tokens.length > 0,
  };
}

async function scaleChecks(provider: Provider, scale: string): Promise<Record<string, unknown>[]> {
  const config = SCALES[scale];
  const policy = new Policy({ config, seed: 1, provider });
  const [, init] = await seconds(async () => policy.getParams());
  const batch = sftBatch(2, 256, config.vocabSize);
  const opts = { loss: { kind: 'sft', aggregation: 'token-mean' }, lr: 1e-5 } as const;
  const [, first] = await seconds(() => policy.trainStep(batch, opts));
  const [m, second] = await seconds(() => policy.trainStep(batch, opts));
  const prompts = Array.from({ length: 4 }, (_, r) =>
    Array.from({ length: 128 }, (_, i) => (r * 131 + i * 17) % config.vocabSize),
  );
  await policy.generate({ prompts, maxNewTokens: 2 }); // compiles prefill and decode
  const [, one] = await seconds(() => policy.generate({ prompts, maxNewTokens: 1, stopTokenIds: [] }));
  const [, seventeen] = await seconds(() => policy.generate({ prompts, maxNewTokens: 17, stopTokenIds: [] }));
  await policy.close();
  const params = paramCount(policy.layout);
  return [
    {
      check: 'scale_train_step',
      scale,
      params,
      tokens: 512,
      initSeconds: round(init),
      firstStepSeconds: round(first),
      stepSeconds: round(second),
      loss: round(m.loss),
      ok: Number.isFinite(m.loss),
    },
    {
      check: 'scale_decode',
      scale,
      params,
      rows: 4,
      promptTokens: 128,
      prefillSeconds: round(one),
      decodeSecondsPerToken: round((seventeen - one) / 16),
      ok: seventeen > 0,
    },
  ];
}

async function main(): Promise<void> {
  const provider = (process.argv[2] ?? 'cuda') as Provider;
  const scale = process.argv.includes('--scale') ? process.argv[process.argv.indexOf('--scale') + 1] : '0.5b';
  if (!SCALES[scale]) throw new Error(`--scale must be one of ${Object.keys(SCALES).join(', ')}`);
  const checks: [string, () => Promise<Record<string, unknown> | Record<string, unknown>[]>][] = [
    ['gradient', () => gradientCheck(provider)],
    ['train_step', () => trainStepCheck(provider)],
    ['generate', () => generateCheck(provider)],
    ['scale', () => scaleChecks(provider, scale)],
  ];
  let failed = 0;
  for (const [name, run] of checks) {
    const [lines, s] = await seconds(() =>
      run().catch((err: Error) => ({ check: name, ok: false, error: err.message.split('\n')[0] })),
    );
    for (const line of [lines].flat()) {
      emit({ ...line, provider, seconds: round(s) });
      if (!line.ok) failed++;
    }
  }
  emit({ check: 'summary', provider, scale, failed, ok: failed === 0 });
  process.exitCode = failed === 0 ? 0 : 1;
}

await main();
