import { StarpoError, type StarpoErrorOptions } from '../errors.ts';
import type { CheckpointId } from './types.ts';

const label = (id: CheckpointId): string => `${id.runId}/${id.lineageId}@${id.iteration}`;

/** Thrown when a checkpoint has no manifest (never saved, half-written or deleted). */
export class CheckpointNotFoundError extends StarpoError {
  readonly checkpoint: CheckpointId;
  constructor(id: CheckpointId, options: StarpoErrorOptions = {}) {
    super(`checkpoint ${label(id)} not found`, { ...options, retryable: false, details: { ...id } });
    this.checkpoint = id;
  }
}

/** Thrown when a checkpoint already exists with different content (a second writer). */
export class CheckpointConflictError extends StarpoError {
  readonly checkpoint: CheckpointId;
  constructor(id: CheckpointId, message: string, options: StarpoErrorOptions = {}) {
    super(`checkpoint ${label(id)}: ${message}`, { ...options, retryable: false, details: { ...id } });
    this.checkpoint = id;
  }
}

export function checkpointLabel(id: CheckpointId): string {
  return label(id);
}
