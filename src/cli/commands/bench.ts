import type { Command } from 'commander';
import { ConfigError } from '../../errors.ts';

/**
 * Benchmarks print JSON lines (one measurement each) and compare side by side within one run,
 * because these machines are shared and noisy. Each is loaded lazily: most pull in heavy modules.
 */
interface BenchOptions {
  readonly quick?: boolean;
  readonly tiny?: boolean;
  readonly cases?: string;
  readonly models?: string;
  readonly model?: string | true;
  readonly steps?: string;
  readonly sides?: string;
  readonly envs?: string;
  readonly presets?: string;
  readonly seeds?: string;
}

const BENCHES: Record<string, { description: string; run: (opts: BenchOptions) => Promise<void> }> = {
  learning: {
    description:
      'tiny models from scratch: warm-start success, RL gain with a 95% interval, ratio to the oracle ceiling, ' +
      'env-spec id, wall-clock (--cases or STARPO_BENCH_CASES=bandit,sokoban-format,… to pick; --tiny: ' +
      'a 2-iteration dry run)',
    run: async (opts) => (await import('../../bench/learning.ts')).benchLearning(opts),
  },
  'learning-seeds': {
    description:
      'StarPO-S vs vanilla StarPO vs GRPO, 3 training seeds each, on Sokoban and FrozenLake from a format-only ' +
      'start and on SmolLM2: final success mean ± std, collapsed runs, Echo-Trap firings (--envs, --presets, ' +
      '--seeds: part of it; --tiny: a dry run)',
    run: async (opts) => (await import('../../bench/learning-seeds.ts')).benchLearningSeeds(opts),
  },
  iteration: {
    description:
      'one SmolLM2 RL iteration at 8 groups x 16 (StarPO-S, 2 threads), every stage, against the targets: Bandit ' +
      '<= 30 s LoRA, <= 60 s full, Sokoban 5 turns <= 3 min (--cases bandit-lora,bandit-full,sokoban-lora,' +
      'sokoban-full; STARPO_BENCH_SET overrides the config)',
    run: async (opts) => (await import('../../bench/iteration.ts')).benchIteration(opts),
  },
  pipeline: {
    description:
      'durable (Temporal + Kafka + S3) vs embedded per-iteration overhead, trajectory events/s to Kafka ' +
      '(services must run)',
    run: async () => (await import('../../bench/pipeline.ts')).benchPipeline(),
  },
  engine: {
    description:
      'MatMul roofline, train_step tokens/s and share of the roofline, the same step in PyTorch, ' +
      'generate with vs without KV cache (STARPO_BENCH_CASES=train_step,pytorch,… to pick)',
    run: async () => (await import('../../bench/engine.ts')).benchEngine(),
  },
  scale: {
    description:
      'Qwen2.5-0.5B and Qwen3-0.6B shapes beside PyTorch eager + transformers: init, compile, train_step ' +
      '(4x512, 1x1024; full and LoRA r 16), peak RSS, generate (--quick: ~43M shapes; --cases, --models, ' +
      '--steps, --sides; --model: a real model on both sides, and llama.cpp F32/Q8_0 for generate)',
    run: async (opts) => (await import('../../bench/scale.ts')).benchScale(opts),
  },
  rollout: {
    description:
      'Sokoban rollouts (full template and compact, 5 turns): re-prefill vs KV cache kept across turns vs + ' +
      'shared prefixes, beside transformers generate on the same turns; the score stage on every row vs the kept ' +
      'rows (STARPO_BENCH_SIZE=4x8)',
    run: async () => (await import('../../bench/rollout.ts')).benchRollout(),
  },
  tools: {
    description:
      'toolmath from scratch: accuracy with vs without tools, OTC vs plain correctness (calls per correct answer)',
    run: async (opts) =>
      (await import('../../bench/tools.ts')).benchTools(opts.cases ?? process.env.STARPO_BENCH_CASES),
  },
  gateway: {
    description: "the OpenAI gateway (SDK, HTTP, template) vs the policy's generate, sequential and concurrent calls",
    run: async () => (await import('../../bench/gateway.ts')).benchGateway(),
  },
  envs: {
    description: 'environment steps/s and Sokoban levels generated/s (one core)',
    run: async () => (await import('../../bench/envs.ts')).benchEnvs(),
  },
};

export function registerBench(program: Command): void {
  program
    .command('bench')
    .argument('<name>', `which benchmark: ${Object.keys(BENCHES).join(', ') || '(none yet)'}`)
    .description('Run a benchmark and print its measurements as JSON lines')
    .option('--quick', 'scale: the ~43M-parameter shapes instead of 0.5B')
    .option(
      '--tiny',
      'learning, learning-seeds: every case at 2 iterations of a tiny model (checks the benchmark end to end)',
    )
    .option('--cases <list>', 'scale, learning, tools, iteration: comma-separated cases (as STARPO_BENCH_CASES)')
    .option('--models <list>', 'scale: comma-separated models')
    .option(
      '--model [spec]',
      'scale: a real model (directory, .gguf or packaged name; alone: smollm2-135m-instruct) instead of the shapes',
    )
    .option('--steps <n>', 'scale: train steps per process (the first compiles; default 3)')
    .option('--sides <list>', 'scale: starpo,pytorch (default both)')
    .option(
      '--envs <list>',
      'learning-seeds: comma-separated environments (sokoban, frozenlake, smollm2-bandit, ' +
        'smollm2-bandit-reversed, smollm2-frozenlake)',
    )
    .option('--presets <list>', 'learning-seeds: comma-separated presets (starpo-s, starpo, grpo)')
    .option('--seeds <list>', 'learning-seeds: comma-separated training seeds (0, 1, 2)')
    .action(async (name: string, opts: BenchOptions) => {
      const bench = Object.hasOwn(BENCHES, name) ? BENCHES[name] : undefined;
      if (!bench)
        throw new ConfigError('bench', `unknown benchmark "${name}"; known: ${Object.keys(BENCHES).join(', ')}`);
      await bench.run(opts);
    });
}
