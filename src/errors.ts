/**
 * One small errors module (Temporal SDK / kafkajs style). Every error starpo raises on purpose is a
 * StarpoError with a stable `name`, a `retryable` flag and readonly structured fields, so the activity
 * boundary can turn it into an ApplicationFailure whose `type` is the class name.
 */
export interface StarpoErrorOptions {
  cause?: unknown;
  retryable?: boolean;
  details?: Record<string, unknown>;
}

export class StarpoError extends Error {
  readonly retryable: boolean;
  readonly details: Readonly<Record<string, unknown>>;
  constructor(message: string, options: StarpoErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.retryable = options.retryable ?? false;
    this.details = Object.freeze({ ...(options.details ?? {}) });
  }
}

/** Thrown when a configuration value is missing, mistyped or out of range; names the field. */
export class ConfigError extends StarpoError {
  readonly field: string;
  constructor(field: string, message: string, options: StarpoErrorOptions = {}) {
    super(`config ${field}: ${message}`, { ...options, retryable: false, details: { field, ...options.details } });
    this.field = field;
  }
}

/** Thrown when a local service cannot be installed, started or reached. */
export class ServiceError extends StarpoError {
  readonly service: string;
  constructor(service: string, message: string, options: StarpoErrorOptions = {}) {
    super(`${service}: ${message}`, { retryable: true, ...options, details: { service, ...options.details } });
    this.service = service;
  }
}

/** Thrown when a pinned package (a PyPI wheel) cannot be downloaded, verified or unpacked; says what to do. */
export class PackageError extends StarpoError {
  constructor(message: string, options: StarpoErrorOptions = {}) {
    super(message, { ...options, retryable: false });
  }
}

/** Thrown when stored data (checkpoint, event, dataset) fails its integrity check or cannot be decoded. */
export class CorruptDataError extends StarpoError {
  constructor(message: string, options: StarpoErrorOptions = {}) {
    super(message, { ...options, retryable: false });
  }
}

/** Thrown when a training batch breaks its layout conventions (array sizes, masks, reward positions). */
export class BatchError extends StarpoError {
  constructor(message: string, options: StarpoErrorOptions = {}) {
    super(message, { ...options, retryable: false });
  }
}

/** Thrown when an external agent program keeps failing an episode (crash, non-zero exit, timeout) past its retries. */
export class AgentError extends StarpoError {
  constructor(message: string, options: StarpoErrorOptions = {}) {
    super(message, { ...options, retryable: false });
  }
}
