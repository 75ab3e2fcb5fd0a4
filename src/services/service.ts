/** What starpo needs to know to install, start, probe and stop one local service. */
export interface LaunchCommand {
  command: string;
  args: string[];
  env?: Record<string, string>;
}

export interface ServiceSpec {
  readonly name: 'temporal' | 'kafka' | 's3';
  readonly description: string;
  /** Every port the service binds; each is checked free before start. */
  ports(): number[];
  /** Commands that must be on PATH to install or run it (go, java, mvn). */
  readonly prerequisites: readonly string[];
  /** True when the cached install is complete (no network needed to start). */
  isInstalled(): boolean;
  /** Downloads/builds into the cache; idempotent. */
  install(log: (line: string) => void): Promise<void>;
  /** Prepares data dirs/configs for a start (never deleting data) and returns how to launch the process. */
  prepare(): Promise<LaunchCommand>;
  /** Where the service keeps its data (src/services/data.ts): checked at start, deleted only by a reset. */
  dataPaths(): string[];
  /** True when the service answers real requests (not just an open port). */
  isReady(): Promise<boolean>;
  readonly readyTimeoutMs: number;
  /** A substring of the process command line, so a recycled pid is never mistaken for ours. */
  readonly processMarker: string;
}
