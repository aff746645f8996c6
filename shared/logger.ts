import pino, { type Logger } from 'pino';
import type { RecentError } from './protocol.ts';
import type { LogLevel } from './settings.ts';

export type Role = 'supervisor' | 'worker';
export type { Logger };

const quieterThanWarn: ReadonlySet<LogLevel> = new Set(['error', 'fatal', 'silent']);

// Headers that can carry the API key: never written to a log line.
const redactPaths = [
  'req.headers["x-api-key"]',
  'req.headers.authorization',
  'headers["x-api-key"]',
  'headers.authorization',
];

/**
 * A JSON-lines logger on stdout tagged with the process's role and pid. `onWarning` receives every
 * record at warning level or above, whatever the level set for stdout, so that the worker's recent
 * errors list sees them even when the log is quieter.
 */
export function createLogger(
  role: Role,
  level: LogLevel,
  onWarning?: (error: RecentError) => void,
  destination: pino.DestinationStream = pino.destination({ dest: 1, sync: true }),
): Logger {
  const options: pino.LoggerOptions = {
    base: { role, pid: process.pid },
    redact: { paths: redactPaths, censor: '[redacted]' },
  };
  if (!onWarning) return pino({ ...options, level }, destination);

  const streams: pino.StreamEntry[] = [{ level: 'warn', stream: warningSink(onWarning) }];
  if (level !== 'silent') streams.push({ level, stream: destination });
  const lowest = quieterThanWarn.has(level) ? 'warn' : level;
  return pino({ ...options, level: lowest }, pino.multistream(streams));
}

function warningSink(onWarning: (error: RecentError) => void): pino.DestinationStream {
  return {
    write(line: string) {
      const record = JSON.parse(line) as {
        time: number;
        level: number;
        msg?: string;
        err?: { message?: string };
      };
      const parts = [record.msg, record.err?.message].filter((part): part is string => !!part);
      const message = [...new Set(parts)].join(': ') || 'a warning with no message';
      onWarning({ when: new Date(record.time).toISOString(), message, level: record.level });
    },
  };
}
