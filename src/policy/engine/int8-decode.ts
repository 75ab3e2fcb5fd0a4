/**
 * The rollout engine's int8 decode step (PolicyOptions.rolloutWeights 'int8'). onnxruntime's MatMulNBits is fast
 * only when its weights are initializers, which it prepacks once per session (fed as inputs, the same product was
 * 5–20× slower than float32: engine/README.md), so these sessions hold the quantized weights of one weight version:
 * made on first use after the weights change, one per decode shape, released when the weights change again.
 * The prefill (extend) stays float32 and fed, so a turn's keys and values are the float32 model's; only the decode
 * step's logits and its own key/value come from the int8 weights.
 */
import type { TensorData } from '../graph/graph.ts';
import type { Packed } from '../model/params.ts';
import { quantizeViews, quantizedViews } from '../model/quantize.ts';
import { type DecodeShape, buildDecodeGraph } from '../programs/generate.ts';
import { ProgramLru } from './program-lru.ts';
import type { ProgramCache } from './programs.ts';
import type { Session } from './session.ts';

/** Decode shapes kept per weight version: each session holds its own prepacked copy (~150 MB for SmolLM2-135M). */
const MAX_SESSIONS = 6;

export class Int8Decode {
  private weights: Map<string, TensorData> | null = null;
  private readonly sessions = new ProgramLru(MAX_SESSIONS);
  /** Weight versions quantized so far (a benchmark reads it; one per version that generated). */
  quantizations = 0;

  constructor(private readonly programs: ProgramCache) {}

  /** The int8 decode session for `shape` under `base`: the whole model's weights, or a LoRA policy's frozen base. */
  decode(shape: DecodeShape, base: () => Packed): Promise<Session> {
    return this.sessions.get(`${shape.groups}x${shape.perGroup}x${shape.prefixLen}x${shape.cacheLen}`, () => {
      const layout = this.programs.layout;
      if (!this.weights) {
        this.weights = quantizeViews(layout, base());
        this.quantizations++;
      }
      const build = () => buildDecodeGraph(layout, shape, 'float32', this.programs.build, quantizedViews(layout));
      return this.programs.compile('decode-int8', build, this.weights);
    });
  }

  /** The quantized weights changed: every session is released and the next decode quantizes again. */
  invalidate(): Promise<void> {
    this.weights = null;
    return this.sessions.clear();
  }
}
