/**
 * A text file written line by line through a stream (exports can be large), into a temporary name
 * that is renamed into place on close: a reader never sees half an export, and a failed replay leaves
 * no file behind.
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { once } from 'node:events';
import { dirname } from 'node:path';

export class LineWriter {
  private readonly temp: string;
  private readonly out: WriteStream;
  lines = 0;

  private constructor(readonly path: string) {
    this.temp = `${path}.tmp-${process.pid}`;
    this.out = createWriteStream(this.temp, { encoding: 'utf8' });
  }

  static async open(path: string): Promise<LineWriter> {
    await mkdir(dirname(path), { recursive: true });
    return new LineWriter(path);
  }

  /** Resolves when the stream can take more (backpressure), so memory stays flat. */
  async write(line: string): Promise<void> {
    this.lines++;
    if (!this.out.write(`${line}\n`)) await once(this.out, 'drain');
  }

  async close(): Promise<void> {
    this.out.end();
    await once(this.out, 'finish');
    await rename(this.temp, this.path);
  }

  async abort(): Promise<void> {
    this.out.destroy();
    await rm(this.temp, { force: true });
  }
}
