/**
 * Int8 against float32 rollout weights (PolicyOptions.rolloutWeights), side by side in one process: a real model
 * directory (SmolLM2-135M-Instruct by default), a chat prompt, sampling at temperature 1 (RL's rollouts), per row
 * count. Per side and row count, one JSON line: decode milliseconds a step (best of `rounds` interleaved rounds,
 * after a first call that quantizes and compiles, whose time is reported apart), and for int8 the gap between the
 * log-probs it sampled with and the float32 model's recomputed ones (what TIS corrects), over its decode tokens.
 * The load average is read before each case.
 *
 *   node --import tsx scripts/bench-rollout-weights.ts [model-dir] [rows,…] [new-tokens] [threads] [rounds]
 */
import os from 'node:os';

const [
  modelDir = '.cache/models/smollm2-135m-instruct/hf',
  rowsArg = '1,8,32',
  newArg = '32',
  threadArg = '2',
  roundsArg = '3',
] = process.argv.slice(2);

const { openModelDirectory } = await import('../src/policy/io/model-dir.ts');
const { readModelWeights } = await import('../src/policy/io/sharded.ts');
const { Policy } = await import('../src/policy/engine/policy.ts');
const { loadTokenizer } = await import('../src/policy/tokenizer/load.ts');
const { importState } = await import('../src/policy/engine/state.ts');

const model = await openModelDirectory(modelDir);
const tokenizer = loadTokenizer(model.assets);
const weights = await readModelWeights(model.dir);
const threads = Number(threadArg);
const newTokens = Number(newArg);
const QUESTIONS = ['Write a short poem about the sea.', 'What is the capital of France?', 'Name three colours.'];
const prompts = QUESTIONS.map((q) => tokenizer.encode(`<|im_start|>user\n${q}<|im_end|>\n<|im_start|>assistant\n`));
const round = (x: number, d = 100) => Math.round(x * d) / d;
const load = () => round(os.loadavg()[0]);

const sides = ['float32', 'int8'] as const;
const policies = Object.fromEntries(
  sides.map((w) => {
    const p = new Policy({ config: model.config, seed: 0, threads, tokenizer, rolloutWeights: w });
    importState(p, { weights, optimizer: null, step: 0 });
    return [w, p];
  }),
) as Record<(typeof sides)[number], InstanceType<typeof Policy>>;

for (const rows of rowsArg.split(',').map(Number)) {
  const req = {
    prompts: Array.from({ length: rows }, (_, r) => prompts[r % prompts.length]),
    maxNewTokens: newTokens,
    stopTokenIds: [],
    sampling: { temperature: 1 },
    rowSeeds: Array.from({ length: rows }, (_, r) => r),
  };
  const best: Record<string, number> = {};
  const first: Record<string, number> = {};
  const loads: number[] = [load()];
  let sampled: Awaited<ReturnType<InstanceType<typeof Policy>['generate']>> = [];
  for (const w of sides) {
    // A policy's first call at a shape compiles (and for int8 quantizes, once per weight version).
    await policies[w].releasePrograms();
    const t0 = performance.now();
    await policies[w].generate(req);
    first[w] = performance.now() - t0;
  }
  for (let r = 0; r < Number(roundsArg); r++) {
    for (const w of sides) {
      const stats = policies[w].generationStats;
      const seconds = stats.decodeSeconds;
      const out = await policies[w].generate(req);
      // No stop token: every row decodes newTokens − 1 steps after the prefill's token.
      const ms = ((stats.decodeSeconds - seconds) * 1000) / (newTokens - 1);
      best[w] = Math.min(best[w] ?? Infinity, ms);
      if (w === 'int8') sampled = out;
    }
    loads.push(load());
  }
  // The int8 side's decode tokens (after the first, which the float32 prefill samples), rescored in float32.
  const gaps: number[] = [];
  for (const [r, g] of sampled.entries()) {
    const tokens = Int32Array.from([...req.prompts[r], ...g.tokens]);
    const attentionMask = new Float32Array(tokens.length).fill(1);
    const { logprobs } = await policies.float32.score({ batch: 1, seqLen: tokens.length, tokens, attentionMask });
    for (let i = 1; i < g.tokens.length; i++) gaps.push(Math.abs(logprobs![req.prompts[r].length + i] - g.logprobs[i]));
  }
  for (const w of sides)
    console.log(
      JSON.stringify({
        bench: 'rollout_weights',
        weights: w,
        rows,
        newTokens,
        threads,
        decodeMsPerStep: round(best[w]),
        speedup: round(best.float32 / best[w]),
        firstCallMs: Math.round(first[w]),
        ...(w === 'int8' && {
          logprobGapMean: round(gaps.reduce((a, b) => a + b, 0) / gaps.length, 1e4),
          logprobGapMax: round(Math.max(...gaps), 1e4),
        }),
        load: loads,
      }),
    );
}
await Promise.all(sides.map((w) => policies[w].close()));
