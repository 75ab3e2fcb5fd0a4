/**
 * A bounded hand-off from a push-style source (a Kafka consumer callback) to an async iterator, so a
 * slow reader applies back-pressure instead of buffering a whole topic in memory.
 */
export class AsyncQueue<T> {
  private readonly items: T[] = [];
  private wakeReader: (() => void) | undefined;
  private wakeWriters: (() => void)[] = [];
  private state: 'open' | 'ended' | 'cancelled' = 'open';
  private error: unknown;

  constructor(private readonly capacity: number) {}

  /** Adds an item, waiting while the queue is full; returns false (dropping it) once the reader left. */
  async push(item: T): Promise<boolean> {
    while (this.items.length >= this.capacity && this.state === 'open') {
      await new Promise<void>((resolve) => this.wakeWriters.push(resolve));
    }
    if (this.state !== 'open') return false;
    this.items.push(item);
    this.wake();
    return true;
  }

  /** No more items: the reader finishes once it has taken the buffered ones. */
  end(): void {
    if (this.state === 'open') this.state = 'ended';
    this.wake();
  }

  /** The reader throws `error` after the buffered items; nothing once the queue has ended (it holds all there is). */
  fail(error: unknown): void {
    if (this.state !== 'open') return;
    this.error = error;
    this.end();
  }

  /** The reader is gone: release every waiting writer. */
  cancel(): void {
    this.state = 'cancelled';
    this.wake();
  }

  get isOpen(): boolean {
    return this.state === 'open';
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    for (;;) {
      const item = this.items.shift();
      if (item !== undefined) {
        this.wake();
        yield item;
        continue;
      }
      if (this.state !== 'open') {
        if (this.error !== undefined) throw this.error;
        return;
      }
      await new Promise<void>((resolve) => (this.wakeReader = resolve));
    }
  }

  private wake(): void {
    const reader = this.wakeReader;
    this.wakeReader = undefined;
    reader?.();
    const writers = this.wakeWriters;
    this.wakeWriters = [];
    for (const w of writers) w();
  }
}
