// The sandbox child: runs model-written JavaScript, one request at a time, each in a fresh vm context.
// Plain JavaScript (no TypeScript loader) because the parent starts it under Node's permission model with
// read access to this one file only. Requests and replies are JSON lines on stdin/stdout:
//   in:  {"id":1,"code":"console.log(1)","timeoutMs":1000,"maxOutputChars":4096}
//   out: {"id":1,"ok":true,"output":"1\n"}   or   {"id":1,"ok":false,"output":"","error":"…","errorKind":"runtime"}
// Layers, outermost first: the parent kills this process on a wall-clock deadline and caps its heap; Node's
// permission model denies fs, child processes, workers, addons and WASI; network modules are disabled here;
// and the user code sees none of it: a new context has only ECMAScript built-ins plus a console made inside
// that context, with string code generation and WebAssembly off, so no host object is reachable from it.
// Calls cannot reach each other. Work can outlive a call only if the host runs context code later: the
// built-ins that ask it to (FinalizationRegistry cleanups, a platform task; WeakRef's kept-alive targets;
// Atomics.waitAsync; WebAssembly's async compiles) are deleted from every context, and promise jobs stay in
// the context's own microtask queue (microtaskMode 'afterEvaluate'), drained within the call's time limit
// and never entered again once the call returns. The context is then dropped.
import dgram from 'node:dgram';
import net from 'node:net';
import vm from 'node:vm';

const denied = () => {
  throw new Error('network access is disabled in the sandbox');
};
// Network is outside Node 20's permission model; the user code cannot reach these, this is depth only.
net.Socket.prototype.connect = denied;
net.Server.prototype.listen = denied;
dgram.Socket.prototype.bind = denied;
dgram.Socket.prototype.send = denied;
for (const name of ['fetch', 'WebSocket', 'EventSource']) delete globalThis[name];

// Runs inside each fresh context. It builds console from that context's own intrinsics and returns a
// function that reads the captured output as one primitive string: the first character says whether the
// output cap was hit. Only primitives cross back, so no user-defined getter or toString runs in the host.
const PRELUDE = `(function (limit) {
  'use strict';
  const stringify = JSON.stringify;
  const toStr = String;
  const isArray = Array.isArray;
  let out = '';
  let over = false;
  const bigintAsDigits = (k, v) => (typeof v === 'bigint' ? toStr(v) : v);
  const show = (v) => {
    if (typeof v === 'string') return v;
    if (typeof v === 'object' && v !== null) {
      try { const s = stringify(v, bigintAsDigits); if (typeof s === 'string') return s; } catch (e) {}
      return isArray(v) ? '[Array]' : '[Object]';
    }
    if (typeof v === 'function') return '[Function]';
    return toStr(v);
  };
  const log = function (...args) {
    if (over) return;
    let line = '';
    for (let i = 0; i < args.length; i++) line += (i ? ' ' : '') + show(args[i]);
    line += '\\n';
    if (out.length + line.length > limit) { over = true; return; }
    out += line;
  };
  const con = Object.freeze({ log, info: log, warn: log, error: log, debug: log });
  Object.defineProperty(globalThis, 'console', { value: con, writable: false, configurable: false });
  const describe = (e) => {
    try {
      if (e !== null && (typeof e === 'object' || typeof e === 'function')) {
        const name = typeof e.name === 'string' ? e.name : 'Error';
        const message = typeof e.message === 'string' ? e.message : toStr(e);
        return name + ': ' + message;
      }
      return 'Uncaught ' + toStr(e);
    } catch (inner) {
      return 'Error: an error that cannot be printed';
    }
  };
  Object.defineProperty(globalThis, '__starpoDescribe', { value: describe, writable: false, configurable: false });
  return () => (over ? '1' : '0') + out;
})`;

const DESCRIBE = new vm.Script('__starpoDescribe(__starpoError)');
const DELETED = ['WebAssembly', 'SharedArrayBuffer', 'Atomics', 'FinalizationRegistry', 'WeakRef'];
// What V8 throws when an ArrayBuffer cannot get memory: the process's data limit (the parent's RLIMIT_DATA).
const OUT_OF_MEMORY = /^RangeError: Array buffer allocation failed$/;

function freshContext(maxOutputChars) {
  const ctx = vm.createContext(Object.create(null), {
    codeGeneration: { strings: false, wasm: false },
    microtaskMode: 'afterEvaluate',
  });
  // Intrinsics that only widen the attack surface; arithmetic, strings, BigInt, Map/Set and JSON stay.
  vm.runInContext(DELETED.map((name) => `delete globalThis.${name};`).join(' '), ctx);
  const take = vm.runInContext(PRELUDE, ctx)(maxOutputChars);
  return { ctx, take };
}

// import() would reject with a host-realm error (Node's "callback missing"), handing the code the host's
// constructors and prototypes. Keywords cannot be spelt with escapes and eval is off, so refusing any code
// that contains the word is sound (at the price of refusing the word in strings and comments too).
const IMPORT_WORD = /(^|[^\w$])import([^\w$]|$)/;

function errorKind(err) {
  if (err && err.code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') return 'timeout';
  return 'runtime';
}

function lastOutput(take) {
  const raw = take();
  if (typeof raw !== 'string') return { output: '', over: false };
  return { output: raw.slice(1), over: raw[0] === '1' };
}

function run(request) {
  const { code, timeoutMs, maxOutputChars } = request;
  const source = String(code);
  if (IMPORT_WORD.test(source)) {
    return { ok: false, output: '', error: 'Error: import is not available in the sandbox', errorKind: 'runtime' };
  }
  let script;
  try {
    script = new vm.Script(source, { filename: 'tool.js' });
  } catch (err) {
    return { ok: false, output: '', error: `SyntaxError: ${err.message}`, errorKind: 'syntax' };
  }
  const { ctx, take } = freshContext(maxOutputChars);
  try {
    script.runInContext(ctx, { timeout: timeoutMs, breakOnSigint: false });
  } catch (err) {
    if (errorKind(err) === 'timeout') {
      return { ok: false, output: '', error: `TimeoutError: ran longer than ${timeoutMs} ms`, errorKind: 'timeout' };
    }
    const error = describe(ctx, err, timeoutMs);
    const kind = OUT_OF_MEMORY.test(error) ? 'memory' : 'runtime';
    return { ok: false, output: lastOutput(take).output, error, errorKind: kind };
  }
  const { output, over } = lastOutput(take);
  if (over) {
    const error = `OutputLimitError: printed more than ${maxOutputChars} characters`;
    return { ok: false, output, error, errorKind: 'output' };
  }
  return { ok: true, output };
}

// A value the code threw may carry user getters: describe it inside the context, under the same time
// limit. A host-realm error (from Node itself) is described here and never handed to the context.
function describe(ctx, err, timeoutMs) {
  if (err instanceof Error) return `${err.name}: ${err.message}`;
  try {
    ctx.__starpoError = err;
    const text = DESCRIBE.runInContext(ctx, { timeout: timeoutMs });
    return typeof text === 'string' ? text : 'Error: an error that cannot be printed';
  } catch {
    return 'Error: an error that cannot be printed';
  }
}

let buffer = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  buffer += chunk;
  for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
    const line = buffer.slice(0, nl);
    buffer = buffer.slice(nl + 1);
    if (line.trim()) reply(line);
  }
});
process.stdin.on('end', () => process.exit(0));

function reply(line) {
  let request;
  try {
    request = JSON.parse(line);
  } catch {
    const bad = { id: -1, ok: false, output: '', error: 'bad request', errorKind: 'protocol' };
    process.stdout.write(`${JSON.stringify(bad)}\n`);
    return;
  }
  const result = run(request);
  process.stdout.write(`${JSON.stringify({ id: request.id, ...result })}\n`);
}

process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
