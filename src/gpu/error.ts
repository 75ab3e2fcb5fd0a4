import { StarpoError } from '../errors.ts';

/** Thrown when the GPU libraries cannot be installed or checked; the message says what to do. */
export class GpuError extends StarpoError {
  constructor(message: string, options: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super(`gpu: ${message}`, { ...options, retryable: false });
  }
}
