import { test } from 'node:test';
import assert from 'node:assert/strict';
import { behaviourVersion, iterationsPlayedBy, pendingVersions, policyLag } from '../../../src/rl/async-schedule.ts';
import { ConfigError } from '../../../src/errors.ts';
import { resolveConfig } from '../../../src/rl/config.ts';

const versions = (k: number, upTo: number) => Array.from({ length: upTo }, (_, i) => behaviourVersion(k, i + 1));

test('an on-policy run (staleness 0) plays iteration i with version i − 1', () => {
  assert.deepEqual(versions(0, 5), [0, 1, 2, 3, 4]);
  assert.deepEqual(
    [1, 2, 5].map((i) => policyLag(0, i)),
    [0, 0, 0],
  );
});

test('with staleness k the first k + 1 iterations play the starting policy, then iteration i plays version i − 1 − k', () => {
  assert.deepEqual(versions(1, 5), [0, 0, 1, 2, 3]);
  assert.deepEqual(versions(2, 6), [0, 0, 0, 1, 2, 3]);
  assert.deepEqual(
    [1, 2, 3, 6].map((i) => policyLag(2, i)),
    [0, 1, 2, 2],
  );
});

test('a checkpoint names the k versions before it that the rollouts after it still play with', () => {
  assert.deepEqual(pendingVersions(0, 7), []);
  assert.deepEqual(pendingVersions(1, 7), [6]);
  assert.deepEqual(pendingVersions(2, 7), [5, 6]);
  assert.deepEqual([pendingVersions(2, 0), pendingVersions(2, 1)], [[], [0]]);
});

test('version 0 unblocks iterations 1 … k + 1 and version v ≥ 1 exactly iteration v + 1 + k, never past the last', () => {
  assert.deepEqual(iterationsPlayedBy(2, 0, 10), [1, 2, 3]);
  assert.deepEqual(iterationsPlayedBy(2, 4, 10), [7]);
  assert.deepEqual([iterationsPlayedBy(2, 0, 2), iterationsPlayedBy(2, 8, 10)], [[1, 2], []]);
  assert.deepEqual(iterationsPlayedBy(0, 3, 10), [4]);
});

test('an asynchronous run needs a checkpoint every iteration and the last k + 1 of them kept', () => {
  const field = (overrides: string[]) => {
    try {
      resolveConfig({ overrides });
    } catch (e) {
      return e instanceof ConfigError ? e.field : String(e);
    }
    return null;
  };
  assert.equal(field(['asyncStaleness=1', 'checkpointEvery=2']), 'checkpointEvery');
  assert.equal(field(['asyncStaleness=3', 'keepLastCheckpoints=3']), 'keepLastCheckpoints');
  assert.equal(field(['asyncStaleness=2', 'keepLastCheckpoints=3']), null);
  assert.equal(field(['offPolicyCorrection=tis', 'oldLogprobs=behaviour']), 'offPolicyCorrection');
});
