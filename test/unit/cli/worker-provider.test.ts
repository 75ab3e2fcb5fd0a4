import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { gatherCudaFacts } from '../../../src/gpu/facts.ts';
import { cudaBlocked } from '../../../src/gpu/status.ts';

const BIN = fileURLToPath(new URL('../../../bin/starpo.js', import.meta.url));
const starpo = (args: string[]) =>
  spawnSync(process.execPath, [BIN, ...args], {
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, STARPO_TEMPORAL_PORT: '1' },
  });
const lastLine = (s: string): string => s.trim().split('\n').at(-1) ?? '';

test('a worker asked for an unknown provider stops with one starpo: line', () => {
  const r = starpo(['worker', '--queue', 'update', '--provider', 'rocm']);
  assert.equal(r.status, 1);
  assert.equal(lastLine(r.stderr), 'starpo: config --provider — must be one of cpu, cuda, webgpu, got "rocm"');
});

test(
  'a worker asked for a GPU provider this machine cannot give stops before connecting, saying why',
  { timeout: 90_000 },
  (t) => {
    const blocked = cudaBlocked(gatherCudaFacts(null));
    if (!blocked) return t.skip('cuda may work here');
    const r = starpo(['worker', '--queue', 'update', '--provider', 'cuda']);
    assert.equal(r.status, 1);
    assert.equal(
      lastLine(r.stderr),
      `starpo: execution provider "cuda" is unavailable — CUDA provider ${blocked.detail}`,
    );
  },
);
