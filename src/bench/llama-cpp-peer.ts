/**
 * llama.cpp as a decode peer (node-llama-cpp 3.21.1, its prebuilt CPU build): where it is installed, the GGUF files
 * starpo's own exporter writes for it, and one run in a fresh process (scripts/llama-cpp-child.ts says why). Used by
 * `bench scale --model` and scripts/bench-llama-cpp.ts.
 *
 * node-llama-cpp is a peer, not a dependency (732 MB with its prebuilt binaries); install it once with
 *   npm i --prefix .cache/peers/llama-cpp -E node-llama-cpp@3.21.1
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { exportModelGguf } from '../models/gguf/export.ts';
import { CACHE_DIR } from '../services/paths.ts';

export const LLAMA_CPP_INSTALL = 'npm i --prefix .cache/peers/llama-cpp -E node-llama-cpp@3.21.1';
export const LLAMA_CPP_PEER = join(CACHE_DIR, 'peers/llama-cpp/node_modules/node-llama-cpp/dist/index.js');
export const GGUF_TYPES = ['F32', 'Q8_0'] as const;
export type GgufType = (typeof GGUF_TYPES)[number];

export const llamaCppInstalled = (): boolean => existsSync(LLAMA_CPP_PEER);

/** The model directory as a GGUF file of `type`, exported once into the cache and reused after. */
export async function ggufFor(modelDir: string, type: GgufType): Promise<string> {
  const dir = join(CACHE_DIR, 'peers/gguf');
  mkdirSync(dir, { recursive: true });
  // a packaged model's weights sit in <name>/hf: name the file after the model, not after "hf"
  const name = basename(modelDir) === 'hf' ? basename(join(modelDir, '..')) : basename(modelDir);
  const path = join(dir, `${name}-${type.toLowerCase()}.gguf`);
  if (!existsSync(path)) await exportModelGguf(modelDir, path, { dtype: type });
  return path;
}

/** What one llama.cpp run measured: decode after the last row's first token, the prefill before it. */
export interface LlamaCppRun {
  readonly decodeSeconds: number;
  readonly prefillSeconds: number;
  readonly tokens: number[][];
  readonly peakRssBytes: number;
}

/** Greedy decoding of `newTokens` after each prompt (no stop token), all rows at once, in a fresh process. */
export async function runLlamaCpp(job: {
  modelPath: string;
  prompts: readonly (readonly number[])[];
  newTokens: number;
  threads: number;
}): Promise<LlamaCppRun> {
  const scratch = mkdtempSync(join(os.tmpdir(), 'starpo-llama-cpp-'));
  try {
    const jobPath = join(scratch, 'job.json');
    writeFileSync(jobPath, JSON.stringify({ peer: LLAMA_CPP_PEER, ...job }));
    const child = fileURLToPath(new URL('../../scripts/llama-cpp-child.ts', import.meta.url));
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', child, jobPath], {
      maxBuffer: 64 << 20,
    });
    return JSON.parse(stdout.trim().split('\n').at(-1)!) as LlamaCppRun;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
