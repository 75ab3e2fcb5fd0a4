/**
 * Compiled programs, built once per model layout and shape bucket and cached by key. Compiling
 * = building the graph (autodiff included), serialising it and creating an onnxruntime session;
 * for tiny models this takes tens of milliseconds, for 0.5B a few seconds, so keys matter.
 */
import { log } from '../../log.ts';
import type { Graph } from '../graph/graph.ts';
import type { Layout } from '../model/layout.ts';
import { type AdamWSpec, DEFAULT_ADAMW } from '../programs/adamw.ts';
import { type DecodeShape, type PrefillShape, buildDecodeGraph, buildPrefillGraph } from '../programs/generate.ts';
import type { LossSpec } from '../programs/loss.ts';
import { buildScoreGraph } from '../programs/score.ts';
import { type TrainShape, buildApplyGraph, buildGradGraph, buildTrainGraph } from '../programs/train.ts';
import { type Session, type SessionOptions, createSession } from './session.ts';

export interface TrainProgram {
  readonly session: Session;
  readonly lossInputs: readonly string[];
  readonly metricNames: readonly string[];
}

/** Programs kept per policy: each session holds its onnxruntime memory arena at its peak size. */
export const MAX_PROGRAMS = 24;

async function releaseProgram(p: Promise<unknown>): Promise<void> {
  const v = (await p.catch(() => null)) as { session?: Session } | Session | null;
  const s = v && 'release' in v ? v : (v as { session?: Session } | null)?.session;
  await s?.release();
}

export class ProgramCache {
  /** Insertion order = recency (a hit moves its key to the end), so the first key is the LRU one. */
  private readonly programs = new Map<string, Promise<unknown>>();

  constructor(
    readonly layout: Layout,
    readonly options: SessionOptions,
    readonly maxPrograms = MAX_PROGRAMS,
  ) {}

  get size(): number {
    return this.programs.size;
  }

  train(shape: TrainShape, loss: LossSpec, optim: AdamWSpec): Promise<TrainProgram> {
    return this.get(['train', shape, loss, optim], async () => {
      const t = buildTrainGraph(this.layout, { ...shape, loss, optim });
      return { session: await this.compile('train', t.graph), lossInputs: t.lossInputs, metricNames: t.metricNames };
    });
  }

  /** Micro-batch gradient accumulation (see train.ts). */
  grad(shape: TrainShape, loss: LossSpec): Promise<TrainProgram> {
    return this.get(['grad', shape, loss], async () => {
      const t = buildGradGraph(this.layout, { ...shape, loss, optim: DEFAULT_ADAMW });
      return { session: await this.compile('grad', t.graph), lossInputs: t.lossInputs, metricNames: t.metricNames };
    });
  }

  /** Clipping + AdamW on an accumulated gradient. */
  apply(optim: AdamWSpec): Promise<TrainProgram> {
    return this.get(['apply', optim], async () => {
      const t = buildApplyGraph(this.layout, optim);
      return { session: await this.compile('apply', t.graph), lossInputs: [], metricNames: t.metricNames };
    });
  }

  score(shape: TrainShape): Promise<Session> {
    return this.get(['score', shape], () => this.compile('score', buildScoreGraph(this.layout, shape)));
  }

  prefill(shape: PrefillShape): Promise<Session> {
    return this.get(['prefill', shape], () => this.compile('prefill', buildPrefillGraph(this.layout, shape)));
  }

  decode(shape: DecodeShape): Promise<Session> {
    return this.get(['decode', shape], () => this.compile('decode', buildDecodeGraph(this.layout, shape)));
  }

  /** Releases every session (onnxruntime frees their memory). */
  async release(): Promise<void> {
    const all = [...this.programs.values()];
    this.programs.clear();
    for (const p of all) await releaseProgram(p);
  }

  /**
   * The cached program for `key`, compiled on a miss. Beyond maxPrograms the least recently used
   * one is released; Policy runs one operation at a time and each operation fetches a program
   * right before using it, so an evicted session is never in use.
   */
  private get<T>(key: unknown[], make: () => Promise<T>): Promise<T> {
    const k = JSON.stringify(key);
    let p = this.programs.get(k) as Promise<T> | undefined;
    if (p) this.programs.delete(k);
    else {
      p = make();
      p.catch(() => this.programs.delete(k)); // a failed compile is retried next time
    }
    this.programs.set(k, p);
    while (this.programs.size > this.maxPrograms) {
      const [oldest, program] = this.programs.entries().next().value as [string, Promise<unknown>];
      this.programs.delete(oldest);
      void releaseProgram(program);
    }
    return p;
  }

  private async compile(kind: string, graph: Graph): Promise<Session> {
    const t0 = performance.now();
    const session = await createSession(graph, this.options);
    log.debug({ kind, nodes: graph.nodes.length, ms: Math.round(performance.now() - t0) }, 'compiled policy program');
    return session;
  }
}
