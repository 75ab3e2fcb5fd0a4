/**
 * PolicyEngine: a Policy in a worker thread. onnxruntime's `session.run` computes synchronously
 * on the calling thread, so running it here keeps the main event loop free (Temporal activity
 * heartbeats, Kafka clients). Calls are queued and answered in order.
 *
 *   const engine = await PolicyEngine.start({ config, role: 'actor', seed: 1 });
 *   const gens = await engine.generate({ prompts, maxNewTokens: 64, sampling: { temperature: 1 }, seed });
 *   const scores = await engine.score(batch);            // log-probs / entropy (actor) or values (critic)
 *   const metrics = await engine.trainStep(batch, { loss: STARPO_S_PPO, lr: 1e-6 });
 *   const state = await engine.getState();                // HF-named weights + AdamW moments + step (with LoRA:
 *                                                         // adapters and their moments; setBase sets the base)
 *   await engine.close();
 */
import { Worker } from 'node:worker_threads';
import { StarpoError } from '../../errors.ts';
import type { FileDigests } from '../io/checkpoint.ts';
import type { Tensor } from '../io/dtype.ts';
import type { SequenceBatch, TrainBatch } from '../programs/batch.ts';
import type { GenerateRequest, Generation } from './generate.ts';
import type { CheckpointExtras, PolicyHandle } from './handle.ts';
import type { ScoreResult } from './handle.ts';
import type { TrainMetrics } from './handle.ts';
import type { TrainStepOptions } from './handle.ts';
import type { EngineInfo, EngineInit, Op, Ops, RemoteError, Response } from './protocol.ts';
import type { ImportOptions, PolicyState } from './state.ts';

/** Thrown in the caller when the engine's worker failed a request (or died); `remoteName` is the worker-side class. */
export class EngineError extends StarpoError {
  readonly remoteName: string;
  constructor(e: RemoteError) {
    super(e.message, {
      retryable: e.retryable,
      details: { ...e.details, remoteName: e.name, remoteStack: e.stack },
      // the worker's system error again (code, syscall, path), for the messages that name a full disk or a path
      cause: e.system && Object.assign(new Error(e.message), e.system),
    });
    this.remoteName = e.name;
  }
}

export class PolicyEngine implements PolicyHandle {
  private nextId = 0;
  private readonly pending = new Map<
    number,
    { resolve: (v: unknown) => void; reject: (e: Error) => void; progress?: (row: number, token: number) => void }
  >();
  private dead: Error | null = null;

  private constructor(private readonly worker: Worker) {
    worker.on('message', (res: Response) => this.settle(res));
    worker.on('error', (err) => this.fail(err));
    worker.on('exit', (code) =>
      this.fail(new StarpoError(`policy engine worker exited (code ${code})`, { retryable: true })),
    );
  }

  /** Starts the worker and waits until it answers (so a bad config fails here, not on first use). */
  static async start(init: EngineInit): Promise<PolicyEngine> {
    const worker = new Worker(new URL('./worker-entry.mjs', import.meta.url), { workerData: init });
    const engine = new PolicyEngine(worker);
    try {
      await engine.info();
    } catch (err) {
      await worker.terminate();
      throw err;
    }
    return engine;
  }

  trainStep(batch: TrainBatch, opts: TrainStepOptions): Promise<TrainMetrics> {
    return this.call('trainStep', batch, opts);
  }
  score(batch: SequenceBatch, temperature?: number): Promise<ScoreResult> {
    return this.call('score', batch, temperature);
  }
  /** With `onToken`, the worker posts each token as it is made and the callback runs here, on the caller's thread. */
  generate(req: GenerateRequest): Promise<Generation[]> {
    const { onToken, ...wire } = req;
    if (onToken === undefined) return this.call('generate', req);
    return this.call('generate', { ...wire, stream: true } as GenerateRequest, onToken);
  }
  /** A copy of weights (HF names), AdamW moments (unless `optimizer` is false) and step. */
  getState(optimizer = true): Promise<PolicyState> {
    return this.call('getState', optimizer);
  }

  saveCheckpoint(dir: string, extras: CheckpointExtras, optimizer = true): Promise<FileDigests> {
    return this.call('saveCheckpoint', dir, extras, optimizer);
  }

  setState(state: PolicyState, opts?: ImportOptions): Promise<{ unused: string[] }> {
    return this.call('setState', state, opts);
  }
  /** LoRA: sets the frozen base from HF-named weights (copied to the worker); returns the names not used. */
  setBase(weights: ReadonlyMap<string, Tensor>): Promise<{ unused: string[] }> {
    return this.call('setBase', weights);
  }
  info(): Promise<EngineInfo> {
    return this.call('info');
  }
  /** Frees the compiled programs (see Policy.releasePrograms). */
  releasePrograms(): Promise<void> {
    return this.call('releasePrograms');
  }

  /** Releases the sessions and ends the worker; pending calls finish first. */
  async close(): Promise<void> {
    if (this.dead) return;
    await this.call('close');
    await this.worker.terminate();
  }

  private call<K extends Op>(op: K, ...args: Ops[K]['args']): Promise<Ops[K]['result']>;
  private call(
    op: 'generate',
    req: GenerateRequest,
    progress: (row: number, token: number) => void,
  ): Promise<Generation[]>;
  private call(op: Op, ...args: unknown[]): Promise<unknown> {
    if (this.dead) return Promise.reject(this.dead);
    const id = this.nextId++;
    const progress = op === 'generate' ? (args[1] as ((row: number, token: number) => void) | undefined) : undefined;
    const sent = op === 'generate' ? args.slice(0, 1) : args;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, progress });
      this.worker.postMessage({ id, op, args: sent });
    });
  }

  private settle(res: Response): void {
    const p = this.pending.get(res.id);
    if (!p) return;
    if ('progress' in res) return p.progress?.(...res.progress);
    this.pending.delete(res.id);
    if (res.ok) p.resolve(res.result);
    else p.reject(new EngineError(res.error));
  }

  private fail(err: Error): void {
    this.dead ??=
      err instanceof StarpoError
        ? err
        : new StarpoError(`policy engine worker failed: ${err.message}`, { cause: err, retryable: true });
    for (const p of this.pending.values()) p.reject(this.dead);
    this.pending.clear();
  }
}
