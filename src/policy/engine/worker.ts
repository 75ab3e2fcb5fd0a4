/**
 * The engine worker: owns one Policy and answers requests one at a time, in arrival order (so a
 * generate issued after a trainStep sees the new weights). Large typed arrays in results are
 * transferred, not copied.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { StarpoError } from '../../errors.ts';
import { paramCount } from '../model/layout.ts';
import { loadTokenizer } from '../tokenizer/load.ts';
import { Policy } from './policy.ts';
import type { EngineInit, Op, Ops, RemoteError, Request, Response, WireGenerateRequest } from './protocol.ts';
import { defaultThreads, probeProvider } from './session.ts';

const init = workerData as EngineInit;
const tokenizer = init.tokenizerFiles ? loadTokenizer(init.tokenizerFiles) : undefined;
const policy = new Policy({ ...init, tokenizer });

type Handlers = { [K in Op]: (...args: Ops[K]['args']) => Promise<Ops[K]['result']> | Ops[K]['result'] };
const handlers: Handlers = {
  trainStep: (batch, opts) => policy.trainStep(batch, opts),
  score: (batch, temperature) => policy.score(batch, temperature),
  generate: (req) => policy.generate(req),
  getState: (optimizer) => policy.getState(optimizer),
  saveCheckpoint: (dir, extras, optimizer) => policy.saveCheckpoint(dir, extras, optimizer),
  setState: (state, opts) => policy.setState(state, opts),
  setBase: (weights) => policy.setBase(weights),
  info: () => ({
    role: policy.role,
    paramCount: paramCount(policy.layout),
    ...(policy.layout.frozen ? { frozenParamCount: paramCount(policy.layout.frozen) } : {}),
    step: policy.step,
    threads: init.threads ?? defaultThreads(),
    provider: init.provider ?? 'cpu',
    programs: policy.programs.size,
  }),
  releasePrograms: () => policy.releasePrograms(),
  close: () => policy.close(),
};

function remote(err: unknown): RemoteError {
  const e = err instanceof Error ? err : new Error(String(err));
  const s = err instanceof StarpoError ? err : null;
  const details = { ...(s?.details ?? {}) };
  const { code, syscall, path, dest } = e as NodeJS.ErrnoException & { dest?: string };
  const system = typeof code === 'string' ? { code, syscall, path, dest } : undefined;
  // A system error (a full disk) stays retryable, as it is when raised in the caller's thread (durable/boundary.ts).
  const retryable = s?.retryable ?? system !== undefined;
  return { name: e.name, message: e.message, stack: e.stack, retryable, details, system };
}

/** ArrayBuffers of typed arrays inside a result, to transfer (each once). */
function buffers(x: unknown, out = new Set<ArrayBuffer>()): Set<ArrayBuffer> {
  if (ArrayBuffer.isView(x)) {
    if (x.buffer instanceof ArrayBuffer && x.byteLength === x.buffer.byteLength) out.add(x.buffer);
  } else if (x instanceof Map) for (const v of x.values()) buffers(v, out);
  else if (x && typeof x === 'object') for (const v of Object.values(x)) buffers(v, out);
  return out;
}

/** A generate request that asked to stream posts each token to the caller as it is made. */
function streaming(id: number, req: WireGenerateRequest): WireGenerateRequest {
  if (!req.stream) return req;
  const post = (row: number, token: number) => parentPort!.postMessage({ id, progress: [row, token] } as Response);
  return { ...req, onToken: post } as WireGenerateRequest;
}

// Every request waits for the provider check, so a missing GPU provider fails the first call clearly.
let queue: Promise<unknown> = probeProvider(init.provider).catch((err: unknown) => err);
const probe = queue;
parentPort!.on('message', (req: Request) => {
  queue = queue.then(async () => {
    let res: Response;
    try {
      const failed = await probe;
      if (failed) throw failed;
      const handler = handlers[req.op] as (...a: unknown[]) => unknown;
      const args = req.op === 'generate' ? [streaming(req.id, req.args[0] as WireGenerateRequest)] : req.args;
      res = { id: req.id, ok: true, result: await handler(...args) };
    } catch (err) {
      res = { id: req.id, ok: false, error: remote(err) };
    }
    parentPort!.postMessage(res, res.ok ? [...buffers(res.result)] : []);
    if (req.op === 'close') parentPort!.close();
  });
});
