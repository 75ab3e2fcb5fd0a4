/**
 * Several sandboxes side by side, so the tool calls of one generation round (one per active episode)
 * run in parallel. Each call goes to the sandbox with the fewest calls in flight.
 */
import { ConfigError } from '../../errors.ts';
import { Sandbox, type SandboxOptions, type SandboxResult } from './sandbox.ts';

/** What the tool executors need: run code, and restart for hard isolation. Sandbox and SandboxPool both fit. */
export interface CodeRunner {
  run(code: string): Promise<SandboxResult>;
  reset(): Promise<void>;
  close(): Promise<void>;
}

export class SandboxPool implements CodeRunner {
  private readonly sandboxes: Sandbox[];
  private readonly inFlight: number[];

  constructor(size: number, options: SandboxOptions = {}) {
    if (!Number.isInteger(size) || size < 1 || size > 64) {
      throw new ConfigError('sandbox.pool', `must be an integer in [1, 64], got ${size}`);
    }
    this.sandboxes = Array.from({ length: size }, () => new Sandbox(options));
    this.inFlight = new Array<number>(size).fill(0);
  }

  get size(): number {
    return this.sandboxes.length;
  }

  async run(code: string): Promise<SandboxResult> {
    let best = 0;
    for (let i = 1; i < this.inFlight.length; i++) if (this.inFlight[i] < this.inFlight[best]) best = i;
    this.inFlight[best]++;
    try {
      return await this.sandboxes[best].run(code);
    } finally {
      this.inFlight[best]--;
    }
  }

  async reset(): Promise<void> {
    await Promise.all(this.sandboxes.map((s) => s.reset()));
  }

  async close(): Promise<void> {
    await Promise.all(this.sandboxes.map((s) => s.close()));
  }
}
