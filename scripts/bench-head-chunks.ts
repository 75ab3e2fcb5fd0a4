/**
 * The LM head in row chunks (ProgramOptions.headChunkElements, model/composite.ts headStats) against the whole
 * head at once, side by side: one train step of a model shape (a model directory's, SmolLM2-135M-Instruct by
 * default, or one of `bench scale`'s, e.g. qwen2.5-0.5b; random init, same arithmetic) at BxT, full or LoRA.
 * Each side runs in a child process of its own, so its peak RSS is its own; the sides alternate for `rounds`
 * rounds. One JSON line per side and round: seconds per step (mean of `steps` after a first step that compiles),
 * the gradient programs it compiled (one `viewGrad` or `grad` per micro-batch shape), peak RSS, load average.
 *
 *   node --import tsx scripts/bench-head-chunks.ts [model-dir] [BxT] [full|lora] [threads] [steps] [rounds]
 */
import { spawnSync } from 'node:child_process';
import os from 'node:os';

const [
  modelDir = '.cache/models/smollm2-135m-instruct/hf',
  shape = '4x512',
  kind = 'full',
  threads = '2',
  steps = '2',
  rounds = '2',
] = process.argv.slice(2);
const SIDES = { chunked: 1 << 24, whole: Infinity } as const;

if (process.env.STARPO_HEAD_CHUNK_SIDE) {
  const side = process.env.STARPO_HEAD_CHUNK_SIDE as keyof typeof SIDES;
  const { openModelDirectory } = await import('../src/policy/io/model-dir.ts');
  const { Policy } = await import('../src/policy/engine/policy.ts');
  const { LORA, syntheticSftBatch } = await import('../src/bench/scale-child.ts');
  const { MODELS } = await import('../src/bench/scale.ts');
  const { parseModelConfig } = await import('../src/policy/io/config.ts');
  const config = MODELS[modelDir] ? parseModelConfig(MODELS[modelDir]) : (await openModelDirectory(modelDir)).config;
  const [B, T] = shape.split('x').map(Number);
  const policy = new Policy({
    config,
    seed: 1,
    threads: Number(threads),
    program: { headChunkElements: SIDES[side] },
    ...(kind === 'lora' ? { lora: LORA } : {}),
  });
  const batch = syntheticSftBatch(B, T, config.vocabSize);
  const step = () => policy.trainStep(batch, { loss: { kind: 'sft', aggregation: 'token-mean' }, lr: 1e-5 });
  await step();
  const compiles = policy.programs.compiles.length;
  const t0 = performance.now();
  for (let i = 0; i < Number(steps); i++) await step();
  const seconds = (performance.now() - t0) / 1000 / Number(steps);
  const grads = policy.programs.compiles.filter(
    (c) => c.kind === 'viewGrad' || c.kind === 'grad' || c.kind === 'train',
  );
  console.log(JSON.stringify({ seconds, compiles, programs: grads.map((c) => c.kind) }));
  await policy.close();
  process.exit(0);
}

for (let round = 1; round <= Number(rounds); round++) {
  for (const side of Object.keys(SIDES)) {
    const load = os.loadavg()[0];
    const child = spawnSync(
      '/usr/bin/time',
      ['-f', 'maxrss_kb=%M', process.execPath, '--import', 'tsx', process.argv[1]!, ...process.argv.slice(2)],
      { env: { ...process.env, STARPO_HEAD_CHUNK_SIDE: side }, encoding: 'utf8' },
    );
    if (child.status !== 0) throw new Error(`${side}: exited with ${child.status}: ${child.stderr.slice(-2000)}`);
    const r = JSON.parse(child.stdout.trim().split('\n').at(-1)!) as { seconds: number; programs: string[] };
    const rssKb = Number(/maxrss_kb=(\d+)/.exec(child.stderr)?.[1]);
    console.log(
      JSON.stringify({
        bench: 'head-chunks',
        side,
        headChunkElements: String(SIDES[side as keyof typeof SIDES]),
        shape,
        kind,
        threads: Number(threads),
        round,
        secondsPerStep: Number(r.seconds.toFixed(3)),
        gradPrograms: r.programs,
        peakRssGb: Number((rssKb / 2 ** 20).toFixed(2)),
        load: Number(load.toFixed(2)),
      }),
    );
  }
}
