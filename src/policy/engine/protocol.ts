/**
 * The typed message API between PolicyEngine (main thread) and its worker. One table says, per
 * operation, what goes in and what comes back (the PolicyHandle interface's calls, and info); both
 * sides are checked against it.
 */
import type { Role } from '../model/layout.ts';
import type { GenerateRequest } from './generate.ts';
import type { PolicyHandle } from './handle.ts';
import type { PolicyOptions } from './policy.ts';
import type { Provider } from './session.ts';

/** What the worker is started with (structured-cloneable: the tokenizer travels as its files). */
/** The options a PolicyEngine's worker builds its Policy from: PolicyOptions, with the tokenizer as its files. */
export type EngineInit = Omit<PolicyOptions, 'tokenizer'> & {
  /** tokenizer.json (+ tokenizer_config.json) contents, for stop strings. */
  readonly tokenizerFiles?: Readonly<Record<string, string>>;
};

export interface EngineInfo {
  readonly role: Role;
  /** Trained parameters (with LoRA: the adapters and a critic's value head). */
  readonly paramCount: number;
  /** With LoRA only: the frozen base's parameters. */
  readonly frozenParamCount?: number;
  readonly step: number;
  readonly threads: number;
  readonly provider: Provider;
  /** Compiled programs held (one per program kind and shape bucket). */
  readonly programs: number;
}

/** Every PolicyHandle call, with its arguments and (awaited) result, plus the engine's own info. */
type HandleOps = {
  [K in keyof PolicyHandle]: { args: Parameters<PolicyHandle[K]>; result: Awaited<ReturnType<PolicyHandle[K]>> };
};

export interface Ops extends HandleOps {
  info: { args: []; result: EngineInfo };
}
export type Op = keyof Ops;

export interface Request<K extends Op = Op> {
  readonly id: number;
  readonly op: K;
  readonly args: Ops[K]['args'];
}

export interface RemoteError {
  readonly name: string;
  readonly message: string;
  readonly stack?: string;
  readonly retryable: boolean;
  readonly details: Record<string, unknown>;
  /** A Node system error's fields (a full disk writing a checkpoint: ENOSPC), so the caller's message can name them. */
  readonly system?: {
    readonly code: string;
    readonly syscall?: string;
    readonly path?: string;
    readonly dest?: string;
  };
}

export type Response =
  | { readonly id: number; readonly ok: true; readonly result: unknown }
  | { readonly id: number; readonly ok: false; readonly error: RemoteError }
  /** A generate request's token as it is made (the request asked to stream: `stream` in its arguments). */
  | { readonly id: number; readonly progress: readonly [row: number, token: number] };

/** What crosses to the worker for a generate call: the request less its callback, and whether to stream. */
export type WireGenerateRequest = Omit<GenerateRequest, 'onToken'> & { readonly stream?: boolean };
