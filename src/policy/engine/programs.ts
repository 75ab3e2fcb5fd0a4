/**
 * Compiled programs, built once per model layout and shape bucket and cached by key. Compiling
 * = building the graph (autodiff included), serialising it and creating an onnxruntime session;
 * for tiny models this takes tens of milliseconds, for 0.5B a few seconds, so keys matter. A key
 * holds the program options (kernels, embedding gradient) beside the kind and shape: a program built
 * with other options is another program.
 */
import { log } from '../../log.ts';
import type { Graph, TensorData } from '../graph/graph.ts';
import { toOnnx } from '../graph/onnx.ts';
import { DEFAULT_PROGRAM_OPTIONS, type ProgramOptions, programOptionsKey } from '../graph/program-options.ts';
import type { Layout } from '../model/layout.ts';
import { type AdamWSpec, DEFAULT_ADAMW, buildAdamwChunkGraph, buildSumSquaresGraph } from '../programs/adamw.ts';
import { type DecodeShape, type ExtendShape, buildDecodeGraph, buildExtendGraph } from '../programs/generate.ts';
import type { LossSpec } from '../programs/loss.ts';
import { buildScoreGraph } from '../programs/score.ts';
import {
  type TrainGraph,
  type TrainShape,
  buildApplyGraph,
  buildGradGraph,
  buildTrainGraph,
  buildViewGradGraph,
} from '../programs/train.ts';
import { ProgramLru } from './program-lru.ts';
import { type Session, type SessionOptions, createSession } from './session.ts';

export interface TrainProgram {
  readonly session: Session;
  readonly lossInputs: readonly string[];
  readonly metricNames: readonly string[];
}

/** What generation runs: the policy's own programs, or with `rolloutWeights` int8 another decode (engine/policy.ts). */
export type GenerationPrograms = Pick<ProgramCache, 'layout' | 'extend' | 'decode'> & {
  /** Decode every step at the first batch size: stopped rows do not leave it (when each size costs a session). */
  readonly fixedDecodeBatch?: boolean;
};

/** Programs kept per policy: each session holds its onnxruntime memory arena at its peak size. */
export const MAX_PROGRAMS = 24;

/**
 * One compile: what was built, its live node count, and seconds to build + serialise the graph and create the session.
 */
export interface CompileRecord {
  readonly kind: string;
  readonly nodes: number;
  readonly buildSeconds: number;
  readonly sessionSeconds: number;
}

/** The cache key of a program: its build options, then its kind and shape (and loss, optimizer, …). */
export function programKey(options: ProgramOptions, parts: readonly unknown[]): string {
  return `${programOptionsKey(options)}|${JSON.stringify(parts)}`;
}

export class ProgramCache {
  private readonly programs: ProgramLru;
  /** Every compile so far, in order (benchmarks report compile time from it). */
  readonly compiles: CompileRecord[] = [];

  constructor(
    readonly layout: Layout,
    readonly options: SessionOptions,
    readonly maxPrograms = MAX_PROGRAMS,
    /** Kernel and gradient choices every program of this cache is built with. */
    readonly build: ProgramOptions = DEFAULT_PROGRAM_OPTIONS,
  ) {
    this.programs = new ProgramLru(maxPrograms);
  }

  get size(): number {
    return this.programs.size;
  }

  train(shape: TrainShape, loss: LossSpec, optim: AdamWSpec): Promise<TrainProgram> {
    const spec = { ...shape, loss, optim, options: this.build };
    const build = () => buildTrainGraph(this.layout, spec);
    return this.get(['train', shape, loss, optim], () => this.compileTrain('train', build));
  }

  /** Micro-batch gradient accumulation (see train.ts). */
  grad(shape: TrainShape, loss: LossSpec): Promise<TrainProgram> {
    const spec = { ...shape, loss, optim: DEFAULT_ADAMW, options: this.build };
    return this.get(['grad', shape, loss], () => this.compileTrain('grad', () => buildGradGraph(this.layout, spec)));
  }

  /** Clipping + AdamW on an accumulated gradient. */
  apply(optim: AdamWSpec): Promise<TrainProgram> {
    return this.get(['apply', optim], () => this.compileTrain('apply', () => buildApplyGraph(this.layout, optim)));
  }

  /** One (micro-)batch's per-view gradients, written (or with `accumulate` added) in place (see train.ts). */
  viewGrad(shape: TrainShape, loss: LossSpec, accumulate: boolean): Promise<TrainProgram> {
    const spec = { ...shape, loss, optim: DEFAULT_ADAMW, options: this.build };
    const build = () => buildViewGradGraph(this.layout, spec, accumulate);
    return this.get(['viewGrad', shape, loss, accumulate], () => this.compileTrain('viewGrad', build));
  }

  /** AdamW on one chunk of `size` floats, outputs bound to the inputs' memory. */
  adamwChunk(size: number, optim: AdamWSpec): Promise<Session> {
    return this.get(['adamwChunk', size, optim], () =>
      this.compile('adamwChunk', () => buildAdamwChunkGraph(size, optim)),
    );
  }

  /** Σ g² of each row of a [rows, width] chunk. */
  sumSquares(rows: number, width: number): Promise<Session> {
    return this.get(['sumSquares', rows, width], () =>
      this.compile('sumSquares', () => buildSumSquaresGraph(rows, width)),
    );
  }

  score(shape: TrainShape): Promise<Session> {
    const build = () => buildScoreGraph(this.layout, shape, 'float32', this.build);
    return this.get(['score', shape], () => this.compile('score', build));
  }

  extend(shape: ExtendShape): Promise<Session> {
    const build = () => buildExtendGraph(this.layout, shape, 'float32', this.build);
    return this.get(['extend', shape], () => this.compile('extend', build));
  }

  decode(shape: DecodeShape): Promise<Session> {
    const build = () => buildDecodeGraph(this.layout, shape, 'float32', this.build);
    return this.get(['decode', shape], () => this.compile('decode', build));
  }

  /** Releases every session (onnxruntime frees their memory). */
  release(): Promise<void> {
    return this.programs.clear();
  }

  /** The cached program for `key` (kind, shape, …), compiled on a miss. */
  private get<T>(key: unknown[], make: () => Promise<T>): Promise<T> {
    return this.programs.get(programKey(this.build, key), make);
  }

  private async compileTrain(kind: string, build: () => TrainGraph): Promise<TrainProgram> {
    let t: TrainGraph | null = null;
    const session = await this.compile(kind, () => (t = build()).graph);
    return { session, lossInputs: t!.lossInputs, metricNames: t!.metricNames };
  }

  /**
   * Builds the graph (autodiff included), serialises it and creates its session, recording the time of each part.
   * `bake` turns the named inputs into initializers holding that data: such a session is tied to those values and is
   * the caller's to keep and release (engine/int8-decode.ts), never cached here.
   */
  async compile(kind: string, build: () => Graph, bake?: ReadonlyMap<string, TensorData>): Promise<Session> {
    const t0 = performance.now();
    const graph = build();
    const bytes = toOnnx(graph, 'starpo', bake);
    const t1 = performance.now();
    const session = await createSession(bytes, this.options);
    const record = {
      kind,
      nodes: graph.nodes.length,
      buildSeconds: (t1 - t0) / 1000,
      sessionSeconds: (performance.now() - t1) / 1000,
    };
    this.compiles.push(record);
    log.debug({ ...record, bytes: bytes.length }, 'compiled policy program');
    return session;
  }
}
