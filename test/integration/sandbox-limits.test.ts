/**
 * The sandbox's memory cap covers memory outside the JS heap, and one call cannot reach a later one.
 * No services needed: only node itself (and /bin/sh, which applies the OS limit).
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { Sandbox } from '../../src/tools/sandbox/sandbox.ts';

// A generous time limit: here memory, not time, must be what stops a call.
const sandbox = new Sandbox({ timeoutMs: 20_000, killGraceMs: 5000, memoryMb: 64, maxOutputChars: 1000 });
after(() => sandbox.close());

const fill = (megabytes: number, keep = 'const keep = []') =>
  `${keep}; for (let i = 0; i < ${megabytes / 16}; i++) keep.push(new Uint8Array(16 * 2 ** 20).fill(1)); ` +
  'console.log(keep.length)';

test('a call that fills 512 MB of Uint8Arrays fails with a MemoryError and the parent runs on', async () => {
  let ticks = 0;
  const timer = setInterval(() => ticks++, 10);
  const r = await sandbox.run(fill(512));
  clearInterval(timer);
  const error = 'MemoryError: exceeded the sandbox memory limit of 64 MB';
  assert.deepEqual(r, { ok: false, output: '', error, errorKind: 'memory' });
  assert.ok(ticks > 0, 'the parent kept running');
  assert.deepEqual(await sandbox.run('console.log(6 * 7)'), { ok: true, output: '42\n' });
});

test('memory a call kept in its globals is not charged to the next call', async () => {
  const keepGlobal = 'globalThis.keep = []';
  assert.deepEqual(await sandbox.run(fill(128, keepGlobal)), { ok: true, output: '8\n' });
  assert.deepEqual(await sandbox.run(fill(128, keepGlobal)), { ok: true, output: '8\n' });
});

test('a finalizer registered in one call cannot make the next call time out', async () => {
  const register =
    'const r = new FinalizationRegistry(() => { for (;;) {} }); globalThis.r = r; ' +
    'for (let i = 0; i < 1e5; i++) r.register({}, i)';
  await sandbox.run(register);
  for (let i = 0; i < 3; i++) assert.deepEqual(await sandbox.run(`console.log(${i})`), { ok: true, output: `${i}\n` });
});

test('no built-in that schedules work for after the call exists in a call', async () => {
  const names = ['FinalizationRegistry', 'WeakRef', 'Atomics', 'WebAssembly'];
  const r = await sandbox.run(`console.log(${names.map((n) => `typeof ${n}`).join(', ')})`);
  assert.deepEqual(r, { ok: true, output: 'undefined undefined undefined undefined\n' });
});
