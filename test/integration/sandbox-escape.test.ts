/**
 * Escape attempts against the code sandbox. Each must fail with a clear error while the parent keeps
 * running, and the sandbox must keep answering afterwards. No services needed: only node itself.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { Sandbox, sandboxNodeFlags } from '../../src/tools/sandbox/sandbox.ts';

const sandbox = new Sandbox({ timeoutMs: 300, killGraceMs: 700, memoryMb: 64, maxOutputChars: 1000 });
after(() => sandbox.close());

async function fails(code: string, error: RegExp, kind?: string, box = sandbox): Promise<void> {
  const r = await box.run(code);
  assert.equal(r.ok, false, `expected a failure, got output ${JSON.stringify(r.output)}`);
  assert.match(r.error ?? '', error);
  if (kind) assert.equal(r.errorKind, kind);
  const check = await box.run('console.log(6 * 7)');
  assert.deepEqual(check, { ok: true, output: '42\n' }, 'the sandbox answers again after the attempt');
}

test('prints console.log output, BigInts as digits and objects as JSON', async () => {
  const r = await sandbox.run('console.log(2n ** 70n, [1, 2n], { a: "x" }); console.log("done")');
  assert.deepEqual(r, { ok: true, output: '1180591620717411303424 [1,"2"] {"a":"x"}\ndone\n' });
});

test('reading files, spawning processes and process.binding find no require or process', async () => {
  const noRequire = /^ReferenceError: require is not defined$/;
  await fails('require("fs").readFileSync("/etc/passwd", "utf8")', noRequire, 'runtime');
  await fails('require("child_process").execSync("id")', /^ReferenceError: require is not defined$/);
  await fails('process.binding("spawn_sync")', /^ReferenceError: process is not defined$/);
  await fails('module.constructor._load("fs")', /^ReferenceError: module is not defined$/);
});

test('the Function constructor reached through shared objects cannot build code', async () => {
  const noCodegen = /^EvalError: Code generation from strings disallowed/;
  await fails('this.constructor.constructor("return process")()', noCodegen);
  await fails('console.log.constructor("return process")()', /^EvalError/);
  await fails('Object.getPrototypeOf(console).constructor.constructor("return this")()', /^EvalError/);
  await fails('try { null.f() } catch (e) { e.constructor.constructor("return process")() }', /^EvalError/);
  await fails('eval("1 + 1")', /^EvalError/);
  await fails('(async () => 1).constructor("return process")()', /^EvalError/);
});

test('import() is refused before the code runs', async () => {
  await fails('import("node:fs").then((m) => console.log(m))', /^Error: import is not available in the sandbox$/);
  await fails('import /* hidden */ ("fs")', /import is not available/);
});

test('network: no fetch, no sockets, no WebSocket', async () => {
  await fails('fetch("http://127.0.0.1:9")', /^ReferenceError: fetch is not defined$/);
  await fails('require("net").connect(80, "127.0.0.1")', /^ReferenceError: require is not defined$/);
  await fails('new WebSocket("ws://127.0.0.1:9")', /^ReferenceError: WebSocket is not defined$/);
});

test('infinite loops, also in microtasks, hit the time limit while the parent keeps ticking', async () => {
  let ticks = 0;
  const timer = setInterval(() => ticks++, 20);
  await fails('while (true) {}', /^TimeoutError: ran longer than 300 ms$/, 'timeout');
  clearInterval(timer);
  // Any tick proves it; how many a 300 ms loop leaves room for depends on the machine's load.
  assert.ok(ticks >= 1, `the parent's event loop ran during the loop (${ticks} ticks)`);
  await fails('function f() { Promise.resolve().then(f) } f()', /^TimeoutError/, 'timeout');
});

test('a memory bomb kills only the child, which is restarted', async () => {
  // A time limit of its own: filling 64 MB took 70–170 ms here, too close to the 300 ms of the other attempts for a
  // slower or busier machine, which would see a timeout instead.
  const roomy = new Sandbox({ timeoutMs: 20_000, killGraceMs: 700, memoryMb: 64, maxOutputChars: 1000 });
  try {
    await roomy.run('console.log(1)');
    const starts = roomy.processStarts;
    const bomb = 'const a = []; for (;;) a.push(new Array(1e6).fill(1))';
    await fails(bomb, /^MemoryError: exceeded the sandbox memory limit of 64 MB$/, 'memory', roomy);
    assert.equal(roomy.processStarts, starts + 1);
  } finally {
    await roomy.close();
  }
});

test('giant outputs stop at the output cap with an error', async () => {
  await fails('console.log("x".repeat(5000))', /^OutputLimitError: printed more than 1000 characters$/, 'output');
  await fails('for (;;) console.log("y".repeat(100))', /^TimeoutError/, 'timeout');
});

test('fork bombs and recursion bombs end as errors', async () => {
  await fails('function f() { f(); f() } f()', /^(RangeError: Maximum call stack size exceeded|TimeoutError.*)$/);
  await fails('new Worker("while(1){}", { eval: true })', /^ReferenceError: Worker is not defined$/);
  // The loop allocates promises as fast as it can: the CPU limit or the memory cap ends it first, by machine speed.
  await fails(
    'for (;;) Promise.resolve().then(() => { for (;;) {} })',
    /^(TimeoutError|MemoryError: exceeded the sandbox memory limit)/,
  );
});

test('thrown values with hostile getters are described without running host code', async () => {
  await fails('throw { get message() { for (;;) {} }, name: "X" }', /^Error: an error that cannot be printed$/);
  await fails('throw 5', /^Uncaught 5$/);
  await fails('syntax error here', /^SyntaxError: Unexpected identifier/, 'syntax');
});

test('no state survives a call: globals and polluted prototypes are gone next time', async () => {
  const pollute = 'globalThis.secret = 1; Object.prototype.polluted = 2; Array.prototype.push = null';
  assert.deepEqual(await sandbox.run(pollute), { ok: true, output: '' });
  const r = await sandbox.run(
    'console.log(typeof secret, ({}).polluted, typeof [].push, typeof Atomics, typeof WebAssembly)',
  );
  assert.deepEqual(r, { ok: true, output: 'undefined undefined function undefined undefined\n' });
});

test('the child flags alone deny files, child processes and workers (defence in depth)', () => {
  const attempt = (code: string) =>
    spawnSync(process.execPath, [...sandboxNodeFlags(64), '-e', code], { encoding: 'utf8', env: {} });
  for (const code of [
    'require("fs").readFileSync("/etc/hostname")',
    'require("child_process").execSync("true")',
    'new (require("worker_threads").Worker)("1", { eval: true })',
    'process.binding("fs")',
  ]) {
    const r = attempt(code);
    assert.notEqual(r.status, 0, code);
    assert.match(r.stderr, /ERR_ACCESS_DENIED/, code);
  }
});

test('reset() replaces the process and calls keep working', async () => {
  const starts = sandbox.processStarts;
  await sandbox.reset();
  assert.deepEqual(await sandbox.run('console.log("fresh")'), { ok: true, output: 'fresh\n' });
  assert.equal(sandbox.processStarts, starts + 1);
});
