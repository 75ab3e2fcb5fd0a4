import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const cli = new URL('../../bin/starpo.js', import.meta.url).pathname;

function starpo(args: string[], env: Record<string, string> = {}) {
  const started = Date.now();
  const r = spawnSync(process.execPath, [cli, ...args], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
    timeout: 120_000,
  });
  return { status: r.status, out: r.stdout + r.stderr, seconds: (Date.now() - started) / 1000 };
}

function listen(port = 0): Promise<Server> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(port, '127.0.0.1', () => resolve(s));
  });
}
const portOf = (s: Server): number => (s.address() as { port: number }).port;

test('services start is idempotent: a second start reports every service already running', () => {
  const r = starpo(['services', 'start']);
  assert.equal(r.status, 0, r.out);
  for (const name of ['temporal', 'kafka', 's3']) assert.match(r.out, new RegExp(`${name}: already running`));
});

test('starting a service on a taken port fails within seconds, naming the port and the service', async () => {
  const squatter = await listen();
  const port = portOf(squatter);
  try {
    const dir = mkdtempSync(join(tmpdir(), 'starpo-services-'));
    const r = starpo(['services', 'start', 's3'], { STARPO_S3_PORT: String(port), STARPO_SERVICES_DIR: dir });
    assert.notEqual(r.status, 0);
    assert.match(r.out, new RegExp(`s3 — port ${port} on 127.0.0.1 is already in use`));
    // It failed before launching anything (no pid file, no service log) rather than after a readiness wait;
    // the bound is loose because a loaded 2-core machine can take seconds just to start the CLI.
    assert.equal(existsSync(join(dir, 's3', 's3.pid')) || existsSync(join(dir, 's3', 's3.log')), false);
    assert.ok(r.seconds < 60, `took ${r.seconds}s`);
  } finally {
    squatter.close();
  }
});

test('doctor reports a service that is not running as down, and running ones as ok', async () => {
  const free = await listen();
  const unused = portOf(free);
  free.close();
  const r = starpo(['doctor', '--json'], { STARPO_TEMPORAL_PORT: String(unused) });
  assert.equal(r.status, 0, r.out);
  const checks = r.out
    .trim()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l));
  const byName = Object.fromEntries(checks.map((c) => [c.name, c]));
  assert.equal(byName.temporal.ok, false);
  assert.match(byName.temporal.detail, new RegExp(`not reachable on 127.0.0.1:${unused}`));
  assert.equal(byName.kafka.ok, true);
  assert.equal(byName.s3.ok, true);
  assert.equal(byName['onnxruntime-node'].ok, true);
});

test('services stop ends the process it started and frees its ports', { timeout: 150_000 }, async () => {
  const [a, b] = [await listen(), await listen()];
  const ports = { STARPO_S3_PORT: String(portOf(a)), STARPO_S3_EXTRA_PORT: String(portOf(b)) };
  a.close();
  b.close();
  const env = { ...ports, STARPO_SERVICES_DIR: mkdtempSync(join(tmpdir(), 'starpo-services-')) };
  assert.equal(starpo(['services', 'start', 's3'], env).status, 0);
  const status = JSON.parse(starpo(['services', 'status', 's3', '--json'], env).out.trim());
  assert.equal(status.ready, true);
  assert.match(starpo(['services', 'stop', 's3'], env).out, /s3: stopped/);
  assert.throws(() => process.kill(status.pid, 0), /ESRCH/);
  const after = JSON.parse(starpo(['services', 'status', 's3', '--json'], env).out.trim());
  assert.deepEqual([after.pid, after.ready], [null, false]);
});
