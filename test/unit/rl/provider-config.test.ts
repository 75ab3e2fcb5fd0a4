import assert from 'node:assert/strict';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { DEFAULTS, resolveConfig } from '../../../src/rl/config.ts';
import { trainEmbedded } from '../../../src/embedded/driver.ts';
import { embeddedProvider } from '../../../src/run/models.ts';
import { gatherCudaFacts } from '../../../src/gpu/facts.ts';
import { cudaBlocked } from '../../../src/gpu/status.ts';

const tiny = [
  'env=bandit',
  'iterations=1',
  'envGroups=2',
  'groupSize=2',
  'miniBatchSize=2',
  'valSeeds=2',
  'threads=1',
  'modelLayers=1',
  'modelHidden=16',
  'modelFfn=16',
];

test('rollouts and updates run on the CPU unless a run says otherwise', () => {
  assert.deepEqual([DEFAULTS.rolloutProvider, DEFAULTS.updateProvider], ['cpu', 'cpu']);
  const c = resolveConfig({ overrides: ['updateProvider=cuda', 'rollout_provider=webgpu'] });
  assert.deepEqual([c.rolloutProvider, c.updateProvider], ['webgpu', 'cuda']);
});

test('a provider name starpo does not know is refused in one line listing the known ones', () => {
  assert.throws(
    () => resolveConfig({ overrides: ['updateProvider=rocm'] }),
    (e: Error) => !e.message.includes('\n') && /updateProvider.*cpu.*cuda.*webgpu/.test(e.message),
  );
});

test('the embedded driver refuses different rollout and update providers before it writes anything', async () => {
  const root = mkdtempSync(join(tmpdir(), 'starpo-provider-'));
  const config = resolveConfig({ overrides: [...tiny, 'updateProvider=cuda'] });
  assert.throws(
    () => embeddedProvider(config),
    /rolloutProvider: is cpu but updateProvider is cuda: the embedded driver samples and trains one actor/,
  );
  await assert.rejects(
    trainEmbedded({ root, runId: 'r', config }),
    /rolloutProvider: is cpu but updateProvider is cuda/,
  );
  assert.equal(existsSync(join(root, 'r')), false);
});

test(
  "an embedded run on a provider this machine cannot give fails with the machine's state before it writes anything",
  { timeout: 60_000 },
  async (t) => {
    const blocked = cudaBlocked(gatherCudaFacts(null));
    if (!blocked) return t.skip('cuda may work here (a GPU machine): scripts/gpu-check.sh covers it');
    const root = mkdtempSync(join(tmpdir(), 'starpo-provider-'));
    const config = resolveConfig({ overrides: [...tiny, 'updateProvider=cuda', 'rolloutProvider=cuda'] });
    await assert.rejects(
      trainEmbedded({ root, runId: 'r', config }),
      (e: Error) => e.message === `execution provider "cuda" is unavailable: CUDA provider ${blocked.detail}`,
    );
    assert.equal(existsSync(join(root, 'r')), false);
  },
);
