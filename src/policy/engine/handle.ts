/**
 * What the stages ask of a model: one interface for the in-process Policy and the PolicyEngine (the same
 * Policy in a worker thread), which answer every call with the same numbers. The engine's message protocol
 * (protocol.ts Ops) is derived from it, so the worker and the caller are checked against it too.
 */
import type { FileDigests, TrainingCheckpoint } from '../io/checkpoint.ts';
import type { Tensor } from '../io/dtype.ts';
import type { AdamWSpec } from '../programs/adamw.ts';
import type { LossSpec } from '../programs/loss.ts';
import type { SequenceBatch, TrainBatch } from '../programs/batch.ts';
import type { GenerateRequest, Generation } from './generate.ts';
import type { ImportOptions, PolicyState } from './state.ts';

export interface TrainStepOptions {
  readonly loss: LossSpec;
  readonly lr: number;
  readonly optim?: AdamWSpec;
  /** Sampling temperature of the rollout; log-probs are those of logits / T (default 1). */
  readonly temperature?: number;
}

/** Metric name → value; always has loss, grad_norm, skipped (1 = non-finite gradient, no update), tokens. */
export type TrainMetrics = Record<string, number>;

export interface ScoreResult {
  /** [batch · seqLen], token-aligned: log p(token t | tokens < t); 0 at t = 0. Actor only. */
  readonly logprobs?: Float32Array;
  readonly entropy?: Float32Array;
  /** Critic only: value of the state before token t. */
  readonly values?: Float32Array;
}

/** What a model's checkpoint holds besides its state: the config, RNG states, tokenizer files, metadata. */
export type CheckpointExtras = Omit<TrainingCheckpoint, 'weights' | 'optimizer' | 'step'>;

export interface PolicyHandle {
  /** One optimizer step (a mini-batch); metrics include loss, grad_norm, skipped, tokens. */
  trainStep(batch: TrainBatch, opts: TrainStepOptions): Promise<TrainMetrics>;
  /** Log-probs and entropy (actor) or values (critic), token-aligned. */
  score(batch: SequenceBatch, temperature?: number): Promise<ScoreResult>;
  generate(req: GenerateRequest): Promise<Generation[]>;
  /** A copy of weights (HF names), AdamW moments (unless `optimizer` is false) and step. */
  getState(optimizer?: boolean): Promise<PolicyState>;
  /**
   * Writes the model's checkpoint into `dir` (io/checkpoint.ts saveCheckpoint, with the weights, AdamW moments unless
   * `optimizer` is false, and step) from its own buffers, after the calls before it and before the calls after it:
   * no copy of the state is made (SmolLM2's weights and moments are 1.6 GB) nor, from an engine, sent across threads.
   */
  saveCheckpoint(dir: string, extras: CheckpointExtras, optimizer?: boolean): Promise<FileDigests>;
  /** Sets weights (and moments and step) as state.ts importState does; returns the names not used. */
  setState(state: PolicyState, opts?: ImportOptions): Promise<{ unused: string[] }>;
  /**
   * LoRA: the frozen base from HF-named weights; returns the names not used. The in-process Policy answers at
   * once (callers await either way).
   */
  setBase(weights: ReadonlyMap<string, Tensor>): Promise<{ unused: string[] }> | { unused: string[] };
  /** Frees every compiled program (and its onnxruntime arena); they are recompiled on next use. */
  releasePrograms(): Promise<void>;
  close(): Promise<void>;
}

/** A handle that only trains (what the update stage and the warm-start ask of a model). */
export type Trainer = Pick<PolicyHandle, 'trainStep'>;

/** What a rollout needs from a policy: batched generation with per-token log-probs (a scripted policy in tests). */
/** A generation request as a rollout makes it: the engine's request with sampling, per-row seeds and stops fixed. */
export type RolloutRequest = GenerateRequest &
  Required<Pick<GenerateRequest, 'sampling' | 'rowSeeds' | 'stopStrings' | 'stopTokenIds'>>;

/** A generation as a rollout reads it (a scripted policy in tests may leave the entropies out). */
export type RolloutGeneration = Omit<Generation, 'entropies' | 'stopString'> & { readonly entropies?: number[] };

export interface GenerationBackend {
  generate(request: RolloutRequest): Promise<RolloutGeneration[]>;
}
