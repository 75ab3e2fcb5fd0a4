/**
 * Decode speed of a real model under CPU contention, onnxruntime's thread pool spinning or not, beside transformers
 * (the peer, when `scripts/install-torch.sh` made .cache/torch-venv): 32 new tokens for one row and for 8 rows of a
 * 121-token prompt, best of 3, first quiet, then beside `busy` processes that spin on the CPU (what a trainer, a
 * second run or another tenant does to a rollout). One JSON line per case, with the load average read before it.
 * starpo decodes greedily, transformers samples (its fastest path either way: both compute every logit).
 *   npx tsx scripts/decode-contention.ts [model-dir] [busy=1]
 */
import { fork, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { loadavg } from 'node:os';
import { openModelDirectory } from '../src/policy/io/model-dir.ts';
import { readModelWeights } from '../src/policy/io/sharded.ts';
import { Policy } from '../src/policy/engine/policy.ts';
import { loadTokenizer } from '../src/policy/tokenizer/load.ts';
import { importState } from '../src/policy/engine/state.ts';

const dir = process.argv[2] ?? '.cache/models/smollm2-135m-instruct/hf';
const busy = Number(process.argv[3] ?? 1);
if (process.argv[2] === '--spin-child') {
  for (;;);
}
const model = await openModelDirectory(dir);
const tokenizer = loadTokenizer(model.assets);
const prompt = tokenizer.encode('The quick brown fox jumps over the lazy dog. '.repeat(12));

async function decodeRate(threads: number, spin: boolean, rows: number): Promise<number> {
  const policy = new Policy({ config: model.config, seed: 0, threads, spin, tokenizer });
  importState(policy, { weights: await readModelWeights(model.dir), optimizer: null, step: 0 });
  const req = { prompts: Array.from({ length: rows }, () => prompt), maxNewTokens: 32, stopTokenIds: [] as number[] };
  await policy.generate({ ...req, maxNewTokens: 2 }); // compile
  let best = Infinity;
  for (let k = 0; k < 3; k++) {
    const t0 = performance.now();
    await policy.generate(req);
    best = Math.min(best, performance.now() - t0);
  }
  await policy.close();
  return (rows * 32) / (best / 1000);
}

const PYTHON = '.cache/torch-venv/bin/python';

/** transformers' generate through scripts/torch_rollout.py (one JSON line per request); null without torch. */
async function transformersRate(rows: number): Promise<number | null> {
  if (!existsSync(PYTHON)) return null;
  const py = spawn(PYTHON, ['scripts/torch_rollout.py', '--model-dir', dir, '--threads', '2'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: py.stdout! })[Symbol.asyncIterator]();
  await lines.next(); // the setup line
  const ask = async (newTokens: number) => {
    py.stdin!.write(
      `${JSON.stringify({ turns: [{ prompts: Array.from({ length: rows }, () => prompt), newTokens }] })}\n`,
    );
    return (JSON.parse((await lines.next()).value as string) as { seconds: number }).seconds;
  };
  await ask(2); // warm up
  let best = Infinity;
  for (let k = 0; k < 3; k++) best = Math.min(best, await ask(32));
  py.kill();
  return (rows * 32) / best;
}

async function cases(label: string): Promise<void> {
  for (const rows of [1, 8]) {
    for (const [threads, spin] of [
      [2, true],
      [2, false],
      [1, false],
    ] as const) {
      const load1 = loadavg()[0];
      const tokensPerSecond = Math.round((await decodeRate(threads, spin, rows)) * 10) / 10;
      const busyNow = label === 'quiet' ? 0 : busy;
      console.log(
        JSON.stringify({
          bench: 'decode_contention',
          label,
          busy: busyNow,
          rows,
          threads,
          spin,
          tokensPerSecond,
          load1,
        }),
      );
    }
    const load1 = loadavg()[0];
    const peer = await transformersRate(rows);
    if (peer !== null) {
      const tokensPerSecond = Math.round(peer * 10) / 10;
      const busyNow = label === 'quiet' ? 0 : busy;
      const line = { bench: 'decode_contention', peer: 'transformers', label, busy: busyNow, rows, threads: 2 };
      console.log(JSON.stringify({ ...line, tokensPerSecond, load1 }));
    }
  }
}

await cases('quiet');
const children = Array.from({ length: busy }, () =>
  fork(new URL(import.meta.url).pathname, ['--spin-child'], { execArgv: ['--import', 'tsx'] }),
);
try {
  await cases('contended');
} finally {
  for (const c of children) c.kill('SIGKILL');
}
