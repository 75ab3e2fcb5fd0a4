/**
 * starpo's decode against llama.cpp's (node-llama-cpp, CPU build) on the same model: the model directory
 * (SmolLM2-135M-Instruct by default) exported by starpo as F32 and Q8_0 GGUF files, the same prompt token ids fed
 * to every side, greedy, no stop token (every row writes exactly `new-tokens`), `rows` sequences at once (llama.cpp
 * batches a context's sequences into one decode call per step, as starpo batches rows; each llama.cpp run in a
 * process of its own, scripts/llama-cpp-child.ts says why). Per row count, one JSON line: each side's decode
 * tokens/s (rows × (new − 1) tokens after the first, best of `rounds` interleaved rounds, after a first call that
 * compiles or warms up), prefill seconds, the ratios to starpo's float32, the share of each row's greedy answer
 * (through its end of turn) before its first difference from starpo's, and the load average around it.
 *
 * node-llama-cpp is a peer, not a dependency; install it once (src/bench/llama-cpp-peer.ts says how), then
 *   node --import tsx scripts/bench-llama-cpp.ts [model-dir] [rows,…] [new-tokens] [threads] [rounds]
 */
import os from 'node:os';
import { basename, resolve } from 'node:path';

const [
  modelDir = '.cache/models/smollm2-135m-instruct/hf',
  rowsArg = '1,8,32',
  newArg = '64',
  threadArg = '2',
  roundsArg = '3',
] = process.argv.slice(2);

const peer = await import('../src/bench/llama-cpp-peer.ts');
if (!peer.llamaCppInstalled()) fail(`node-llama-cpp is not installed: run \`${peer.LLAMA_CPP_INSTALL}\` first`);

const { openModelDirectory } = await import('../src/policy/io/model-dir.ts');
const { readModelWeights } = await import('../src/policy/io/sharded.ts');
const { Policy } = await import('../src/policy/engine/policy.ts');
const { loadTokenizer } = await import('../src/policy/tokenizer/load.ts');
const { importState } = await import('../src/policy/engine/state.ts');

/** A bad argument is one line, not a stack trace. */
function fail(message: string): never {
  console.error(`bench-llama-cpp: ${message}`);
  process.exit(1);
}
const counts = (arg: string, name: string): number[] => {
  const xs = arg.split(',').map(Number);
  if (!xs.every((x) => Number.isInteger(x) && x >= 1)) fail(`${name} must be whole numbers ≥ 1, not "${arg}"`);
  return xs;
};
const rowCounts = counts(rowsArg, 'rows');
const [newTokens] = counts(newArg, 'new-tokens');
const [threads] = counts(threadArg, 'threads');
const [rounds] = counts(roundsArg, 'rounds');
const model = await openModelDirectory(modelDir).catch((err: Error) => fail(err.message));
const tokenizer = loadTokenizer(model.assets);
const round = (x: number, d = 100) => Math.round(x * d) / d;
const load = () => round(os.loadavg()[0]);

const QUESTIONS = ['Write a short poem about the sea.', 'What is the capital of France?', 'Name three colours.'];
const prompts = QUESTIONS.map((q) => tokenizer.encode(`<|im_start|>user\n${q}<|im_end|>\n<|im_start|>assistant\n`));

// The GGUF files, exported once by starpo's own exporter.
const ggufTypes = peer.GGUF_TYPES;
// One at a time: each export holds the whole model in memory.
const ggufPaths = {} as Record<(typeof ggufTypes)[number], string>;
for (const t of ggufTypes) ggufPaths[t] = await peer.ggufFor(model.dir, t);

const policy = new Policy({ config: model.config, seed: 0, threads, tokenizer });
importState(policy, { weights: await readModelWeights(model.dir), optimizer: null, step: 0 });

interface SideRun {
  decodeSeconds: number;
  prefillSeconds: number;
  tokens: number[][];
}

async function starpoRun(rowPrompts: number[][]): Promise<SideRun> {
  const stats = policy.generationStats;
  const [d0, p0] = [stats.decodeSeconds, stats.prefillSeconds];
  const out = await policy.generate({ prompts: rowPrompts, maxNewTokens: newTokens, stopTokenIds: [] });
  return {
    decodeSeconds: stats.decodeSeconds - d0,
    prefillSeconds: stats.prefillSeconds - p0,
    tokens: out.map((g) => g.tokens),
  };
}

/** One llama.cpp run in a fresh process (scripts/llama-cpp-child.ts says why). */
const llamaRun = (type: (typeof ggufTypes)[number], rowPrompts: number[][]): Promise<SideRun> =>
  peer.runLlamaCpp({ modelPath: ggufPaths[type], prompts: rowPrompts, newTokens, threads });

const sides = ['starpo-f32', 'llama.cpp-F32', 'llama.cpp-Q8_0'] as const;
const runSide = (side: (typeof sides)[number], rowPrompts: number[][]) =>
  side === 'starpo-f32' ? starpoRun(rowPrompts) : llamaRun(side === 'llama.cpp-F32' ? 'F32' : 'Q8_0', rowPrompts);

for (const rows of rowCounts) {
  const rowPrompts = Array.from({ length: rows }, (_, r) => prompts[r % prompts.length]!);
  const loads = [load()];
  for (const side of sides) await runSide(side, rowPrompts); // compile / warm up
  const best: Record<string, SideRun> = {};
  for (let r = 0; r < rounds; r++) {
    for (const side of sides) {
      const run = await runSide(side, rowPrompts);
      if (!best[side] || run.decodeSeconds < best[side].decodeSeconds) best[side] = run;
    }
    loads.push(load());
  }
  const decodeTokens = rows * (newTokens - 1);
  const tokensPerSecond = (s: string) => round(decodeTokens / best[s]!.decodeSeconds, 10);
  // Greedy rows agree until their first different token (float sums in another order, or Q8_0's rounding, can flip
  // a near tie; everything after follows another text): the mean share of each row's answer before it, the answer
  // being starpo's tokens through its first end-of-turn (past it the model writes near ties, and llama.cpp's batches
  // mix prefill and decode rows in varying ways).
  const eos = new Set(model.config.eosTokenIds);
  const sameTokens = (s: string) => {
    const shared = best['starpo-f32']!.tokens.map((all, r) => {
      const end = all.findIndex((t) => eos.has(t));
      const a = end === -1 ? all : all.slice(0, end + 1);
      const b = best[s]!.tokens[r]!;
      const first = a.findIndex((t, i) => t !== b[i]);
      return (first === -1 ? a.length : first) / a.length;
    });
    return round(shared.reduce((x, y) => x + y, 0) / shared.length, 1000);
  };
  console.log(
    JSON.stringify({
      bench: 'decode-llama-cpp',
      model: basename(resolve(modelDir, '..')),
      rows,
      newTokens,
      threads,
      rounds,
      tokensPerSecond: Object.fromEntries(sides.map((s) => [s, tokensPerSecond(s)])),
      prefillSeconds: Object.fromEntries(sides.map((s) => [s, round(best[s]!.prefillSeconds, 1000)])),
      starpoVs: {
        'llama.cpp-F32': round(tokensPerSecond('starpo-f32') / tokensPerSecond('llama.cpp-F32')),
        'llama.cpp-Q8_0': round(tokensPerSecond('starpo-f32') / tokensPerSecond('llama.cpp-Q8_0')),
      },
      greedyPrefixSharedWithStarpo: {
        'llama.cpp-F32': sameTokens('llama.cpp-F32'),
        'llama.cpp-Q8_0': sameTokens('llama.cpp-Q8_0'),
      },
      load: { before: loads[0], max: Math.max(...loads), after: loads.at(-1) },
    }),
  );
}
