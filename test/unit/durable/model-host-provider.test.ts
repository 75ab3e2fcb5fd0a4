import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ModelHost } from '../../../src/durable/model-host.ts';
import { resolveConfig } from '../../../src/rl/config.ts';

test("a worker's hosts take the run's provider for their role, and a worker's --provider overrides both", () => {
  const c = resolveConfig({ overrides: ['updateProvider=cuda', 'rolloutProvider=cpu'] });
  assert.equal(new ModelHost('all').providerFor(c), 'cuda');
  assert.equal(new ModelHost('actor').providerFor(c), 'cpu');
  assert.equal(new ModelHost('actor', 'webgpu').providerFor(c), 'webgpu');
  assert.equal(new ModelHost('all', 'cpu').providerFor(c), 'cpu');
});
