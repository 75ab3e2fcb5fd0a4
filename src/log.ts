import { pino, type Logger } from 'pino';

/**
 * The process logger. JSON lines by default (machine-readable, what services and CI keep);
 * STARPO_LOG_PRETTY=1 or an interactive terminal gets pino-pretty. STARPO_LOG_LEVEL sets the level.
 */
function makeLogger(): Logger {
  const level = process.env.STARPO_LOG_LEVEL ?? 'info';
  const pretty = process.env.STARPO_LOG_PRETTY === '1' || (process.env.STARPO_LOG_PRETTY !== '0' && process.stderr.isTTY);
  if (pretty) {
    return pino({ level, transport: { target: 'pino-pretty', options: { destination: 2, ignore: 'pid,hostname' } } });
  }
  return pino({ level }, pino.destination(2));
}

export const log: Logger = makeLogger();
