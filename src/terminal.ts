/**
 * What the terminal behind an output stream supports, decided in one place for tables, logs and the progress
 * bar: colour only on a terminal, and only when NO_COLOR (https://no-color.org) is unset or empty.
 */
import Table from 'cli-table3';

/** The part of a stream (process.stdout, process.stderr) the decision reads. */
export interface OutputStream {
  readonly isTTY?: boolean;
}

export function colourOn(stream: OutputStream = process.stdout, env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(stream.isTTY) && !env.NO_COLOR && env.TERM !== 'dumb';
}

/**
 * A cli-table3 table for standard output. cli-table3 colours its header and borders whatever the output is
 * (escape codes end up in a pipe or a file), so colour is decided here.
 */
export function newTable(head: string[], colour: boolean = colourOn(process.stdout)): Table.Table {
  return new Table({ head, style: colour ? {} : { head: [], border: [] } });
}
