/**
 * One llama.cpp run of scripts/bench-llama-cpp.ts, in a process of its own. node-llama-cpp 3.21.1 on this CPU mixes
 * up rows in multi-sequence runs (a row takes words from another: "The capital Redour is Paris"): within one
 * process every run after the first was mostly such text, even with a new model and context each time and on one
 * thread; a fresh process per run does it on a few rows, now and then. Reads {peer, modelPath, prompts, newTokens,
 * threads} from the JSON file named by its argument; prints one JSON line: {decodeSeconds, prefillSeconds, tokens}.
 */
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

interface Job {
  peer: string;
  modelPath: string;
  prompts: number[][];
  newTokens: number;
  threads: number;
}
const job = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as Job;
const llamaCpp = await import(pathToFileURL(job.peer).href);
const llama = await llamaCpp.getLlama({ gpu: false, build: 'never', logLevel: 'error' });
const model = await llama.loadModel({ modelPath: job.modelPath });
const rows = job.prompts.length;
const longest = Math.max(...job.prompts.map((p) => p.length));
const context = await model.createContext({
  sequences: rows,
  // Room well beyond what a row needs: with ~120 slots a sequence, 8 sequences wrote garbage even in a first run.
  contextSize: rows * Math.max(512, 2 * (longest + job.newTokens)),
  threads: { ideal: job.threads, min: job.threads },
});
const sequences = job.prompts.map(() => context.getSequence());
const firstAt: number[] = [];
const t0 = performance.now();
const tokens = await Promise.all(
  job.prompts.map(async (p, r) => {
    const got: number[] = [];
    // yieldEogToken: llama.cpp would end a row at its end-of-turn token; starpo's rows go on (no stop token). A copy
    // of the prompt: node-llama-cpp keeps the array it is given, and rows with the same prompt would share one.
    for await (const t of sequences[r].evaluate(p.slice(), { temperature: 0, yieldEogToken: true })) {
      if (got.length === 0) firstAt[r] = performance.now();
      got.push(t);
      if (got.length >= job.newTokens) break;
    }
    return got;
  }),
);
const end = performance.now();
const prefillEnd = Math.max(...firstAt);
const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
const peakRssBytes = hwm ? Number(hwm[1]) * 1024 : process.resourceUsage().maxRSS * 1024;
console.log(
  JSON.stringify({
    decodeSeconds: (end - prefillEnd) / 1000,
    prefillSeconds: (prefillEnd - t0) / 1000,
    tokens,
    peakRssBytes,
  }),
);
await context.dispose();
await model.dispose();
await llama.dispose();
