import pino, { type Logger } from 'pino';
import { LossyOutput } from './lossy-output.ts';
import type { RecentError } from './protocol.ts';
import type { LogLevel } from './settings.ts';

export type Role = 'supervisor' | 'worker';
export type { Logger };

/** A warning or worse, for the recent errors; `slot` as RecentErrors.add takes it. */
export type WarningSink = (error: RecentError, slot?: string) => void;

const quieterThanWarn: ReadonlySet<LogLevel> = new Set(['error', 'fatal', 'silent']);

// Headers that can carry the API key: never written to a log line.
const redactPaths = [
  'req.headers["x-api-key"]',
  'req.headers.authorization',
  'headers["x-api-key"]',
  'headers.authorization',
];

let stdout: LossyOutput | undefined;
/** This process's standard output, shared by its loggers: never blocks, drops what a stuck reader leaves. */
export function standardOutput(): LossyOutput {
  stdout ??= new LossyOutput(1);
  return stdout;
}

/**
 * A JSON-lines logger on stdout tagged with the process's role and pid. `onWarning` receives every
 * record at warning level or above, whatever the level set for stdout, so that the recent errors list
 * sees them even when the log is quieter. A record's `slot` field is passed on with it.
 */
export function createLogger(
  role: Role,
  level: LogLevel,
  onWarning?: WarningSink,
  destination: pino.DestinationStream = standardOutput(),
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

/**
 * Logs, at most every `everyMs`, how many lines the output dropped since the last report. The line may
 * itself be dropped while the reader is still stuck; it is then logged once the reader takes lines again.
 */
export function reportDroppedLines(logger: Logger, output: LossyOutput, everyMs = 10_000): () => void {
  let reported = 0;
  const timer = setInterval(() => {
    const dropped = output.dropped;
    if (dropped === reported) return;
    const before = output.dropped;
    logger.warn(
      { droppedLogLines: dropped - reported },
      `dropped ${dropped - reported} log lines: standard output did not keep up (its reader is stuck or slow)`,
    );
    // Counted as reported only once this line got through.
    if (output.dropped === before) reported = dropped;
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}

function warningSink(onWarning: WarningSink): pino.DestinationStream {
  return {
    write(line: string) {
      const record = JSON.parse(line) as {
        time: number;
        level: number;
        msg?: string;
        err?: { message?: string };
        slot?: string;
      };
      const parts = [record.msg, record.err?.message].filter((part): part is string => !!part);
      const message = [...new Set(parts)].join(': ') || 'a warning with no message';
      onWarning({ when: new Date(record.time).toISOString(), message, level: record.level }, record.slot);
    },
  };
}
