import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PROVIDERS, ProviderError, probeProvider } from '../../../src/policy/engine/session.ts';
import { gatherCudaFacts } from '../../../src/gpu/facts.ts';
import { probeInChild } from '../../../src/policy/engine/provider-probe.ts';
import { PROVIDER_NAMES } from '../../../src/gpu/providers.ts';
import { classifyCuda, cudaBlocked } from '../../../src/gpu/status.ts';

test("the config's provider names are the engine's", () => {
  assert.deepEqual([...PROVIDER_NAMES], [...PROVIDERS]);
});

test(
  'a cuda session that cannot get its provider fails with the state doctor reports, never running on the CPU',
  { timeout: 120_000 },
  async () => {
    const facts = gatherCudaFacts(null);
    const status = cudaBlocked(facts) ?? classifyCuda({ ...facts, probe: await probeInChild('cuda') });
    if (status.state === 'working') return probeProvider('cuda'); // a GPU machine: the session must simply work
    await assert.rejects(probeProvider('cuda'), (err: Error) => {
      assert.ok(err instanceof ProviderError);
      assert.ok(
        err.message.startsWith(
          `execution provider "cuda" is unavailable: CUDA provider ${status.detail.split(' (')[0]}`,
        ),
        err.message,
      );
      return true;
    });
  },
);
