import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { pino, type DestinationStream, type Logger } from 'pino';
import { prettyFactory } from 'pino-pretty';
import { colourOn } from './terminal.ts';

/**
 * The process logger. JSON lines on stderr by default (machine-readable, what services and CI keep);
 * STARPO_LOG_PRETTY=1 or an interactive terminal gets pino-pretty. STARPO_LOG_LEVEL sets the level.
 * A command that owns the terminal (train's progress bar) sends the lines to a file instead (logToFile).
 */
export const prettyLogs =
  process.env.STARPO_LOG_PRETTY === '1' || (process.env.STARPO_LOG_PRETTY !== '0' && Boolean(process.stderr.isTTY));

/** One JSON log line (with its newline) as a person reads it: pino-pretty, or as it is. */
export const forTerminal: (line: string) => string = prettyLogs
  ? prettyFactory({ ignore: 'pid,hostname', colorize: colourOn(process.stderr) })
  : (line) => line;

type Sink = (line: string) => void;

// pino.destination writes asynchronously and flushes at exit, as before; pino-pretty runs in this thread.
const stderr: DestinationStream = pino.destination(2);
const terminal: Sink = (line) => void stderr.write(forTerminal(line));
let sinks: readonly Sink[] = [terminal];

export const log: Logger = pino(
  { level: process.env.STARPO_LOG_LEVEL ?? 'info' },
  { write: (line: string) => sinks.forEach((sink) => sink(line)) },
);

/**
 * From now on the log lines go to `path` as JSON lines (appended; the file and its directory are made with
 * the first line, so nothing is written before something is logged), and to `alsoTo` (given each line) if
 * set, instead of stderr. Returns the function that closes the file and gives the lines back to stderr.
 */
export function logToFile(path: string, alsoTo?: Sink): () => void {
  let fd: number | null = null;
  const file: Sink = (line) => {
    if (fd === null) {
      mkdirSync(dirname(path), { recursive: true });
      fd = openSync(path, 'a');
    }
    writeSync(fd, line);
  };
  sinks = alsoTo ? [file, alsoTo] : [file];
  return () => {
    sinks = [terminal];
    if (fd !== null) closeSync(fd);
    fd = null;
  };
}
