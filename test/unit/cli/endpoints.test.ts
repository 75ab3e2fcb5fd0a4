import { test } from 'node:test';
import assert from 'node:assert/strict';
import { endpoints } from '../../../src/endpoints.ts';

/** Runs `fn` with the given environment variables set, then restores them. */
function withEnv(vars: Record<string, string>, fn: () => void): void {
  const before = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  Object.assign(process.env, vars);
  try {
    fn();
  } finally {
    for (const [k, v] of Object.entries(before))
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
  }
}

test('workers on other machines reach shared services through STARPO_TEMPORAL_ADDRESS, STARPO_KAFKA_BROKERS, STARPO_S3_ENDPOINT', () => {
  withEnv(
    {
      STARPO_TEMPORAL_ADDRESS: 'temporal.lan:7233',
      STARPO_KAFKA_BROKERS: 'k1.lan:9092, k2.lan:9092',
      STARPO_S3_ENDPOINT: 'http://s3.lan:9090',
    },
    () => {
      assert.equal(endpoints.temporal.address, 'temporal.lan:7233');
      assert.deepEqual(endpoints.kafka.brokers, ['k1.lan:9092', 'k2.lan:9092']);
      assert.equal(endpoints.s3.endpoint, 'http://s3.lan:9090');
    },
  );
});

test('unset or empty, the addresses are the local services on their ports', () => {
  withEnv({ STARPO_TEMPORAL_ADDRESS: '', STARPO_KAFKA_BROKERS: '', STARPO_S3_ENDPOINT: '' }, () => {
    assert.equal(endpoints.temporal.address, `127.0.0.1:${endpoints.temporal.port}`);
    assert.deepEqual(endpoints.kafka.brokers, [`127.0.0.1:${endpoints.kafka.port}`]);
    assert.equal(endpoints.s3.endpoint, `http://127.0.0.1:${endpoints.s3.port}`);
  });
});
