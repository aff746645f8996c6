import pino, { type Logger } from 'pino';
import { LossyOutput } from './lossy-output.ts';
import { safeLine, safeLines } from './terminal-text.ts';
import type { RecentError } from './api-types.ts';
import type { LogFormat, LogLevel } from './settings.ts';

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
 * Where a process's log lines go in `format`: `output` itself for JSON lines; for text, each line is
 * made readable by pino-pretty on its way there, synchronously, with no thread of its own, so that
 * `output` (which never blocks) stays the last stop. Only this destination changes: the recent errors
 * and the log kept for /rest/system/log still read JSON. pino-pretty is loaded only for text, and
 * `colorize` defaults to its own test (stdout a terminal, NO_COLOR unset).
 */
export async function logDestination(
  format: LogFormat,
  output: pino.DestinationStream = standardOutput(),
  colorize?: boolean,
): Promise<pino.DestinationStream> {
  if (format === 'json') return output;
  // Its module.exports, as Node and the bundle both give a CommonJS package's (the bundle has no named exports).
  const { prettyFactory, isColorSupported } = (await import('pino-pretty')).default;
  const prettify = prettyFactory({
    colorize: colorize ?? isColorSupported,
    // The local time, as its `SYS:standard` has it, made here: its formatter took half a line's time.
    translateTime: false,
    customPrettifiers: { time: (time) => `[${localTime(Number(time))}]` },
    // One line a record (a stack still takes its lines): as grep and a terminal's width like them.
    singleLine: true,
  });
  return {
    write(line: string) {
      // Led by who wrote it, syslog's way (`worker[1234] model: …`), where pino-pretty would show
      // the pid alone; the fields that said so go, as does the host name.
      const record = JSON.parse(line) as Record<string, unknown>;
      const who = `${String(record.role)}[${String(record.pid)}]`;
      const facility = typeof record.facility === 'string' ? ` ${record.facility}` : '';
      // A control character in a message (a name another device sent) is shown escaped: it can neither
      // forge a line nor drive the terminal. An error's stack keeps its own lines, each escaped.
      record.msg = `${who}${facility}: ${safeLine(String(record.msg ?? ''))}`;
      const err = record.err as { message?: unknown; stack?: unknown } | undefined;
      if (err && typeof err === 'object') {
        if (typeof err.message === 'string') err.message = safeLine(err.message);
        if (typeof err.stack === 'string') err.stack = safeStack(err.stack);
      }
      for (const key of ['pid', 'hostname', 'role', 'facility']) delete record[key];
      output.write(prettify(record));
    },
  };
}

// A stack's first line holds the message, which may hold line breaks of its own: those are escaped, the
// `at` lines after it kept as lines.
function safeStack(stack: string): string {
  const at = stack.search(/\n\s+at /);
  return at < 0 ? safeLine(stack) : `${safeLine(stack.slice(0, at))}${safeLines(stack.slice(at))}`;
}

// `2026-11-27 12:00:00.123 +0100`.
function localTime(ms: number): string {
  const at = new Date(ms);
  const offset = -at.getTimezoneOffset();
  const date = `${at.getFullYear()}-${two(at.getMonth() + 1)}-${two(at.getDate())}`;
  const time = `${two(at.getHours())}:${two(at.getMinutes())}:${two(at.getSeconds())}`;
  const zone = `${offset < 0 ? '-' : '+'}${two(Math.floor(Math.abs(offset) / 60))}${two(Math.abs(offset) % 60)}`;
  return `${date} ${time}.${String(at.getMilliseconds()).padStart(3, '0')} ${zone}`;
}

function two(value: number): string {
  return String(value).padStart(2, '0');
}

/**
 * A logger on stdout (JSON lines, or text through logDestination) tagged with the process's role and pid. `onWarning` receives every
 * record at warning level or above, whatever the level set for stdout, so that the recent errors list
 * sees them even when the log is quieter. A record's `slot` field is passed on with it. `record`
 * receives every line logged (the log buffer behind /rest/system/log); at level info, stdout also
 * shows the debug lines of the facilities turned on (see debug-facilities.ts), as Syncthing does.
 */
export function createLogger(
  role: Role,
  level: LogLevel,
  onWarning?: WarningSink,
  destination: pino.DestinationStream = standardOutput(),
  record?: pino.DestinationStream,
): Logger {
  const options: pino.LoggerOptions = {
    base: { role, pid: process.pid },
    redact: { paths: redactPaths, censor: '[redacted]' },
  };
  if (!onWarning && !record) return pino({ ...options, level }, destination);

  const streams: pino.StreamEntry[] = [];
  if (onWarning) streams.push({ level: 'warn', stream: warningSink(onWarning) });
  if (record) streams.push({ level: 'trace', stream: record });
  if (level !== 'silent') streams.push({ level: level === 'info' ? 'debug' : level, stream: destination });
  const lowest = onWarning && quieterThanWarn.has(level) ? 'warn' : level;
  return pino({ ...options, level: lowest }, pino.multistream(streams));
}

/**
 * Logs how many lines the output dropped, as soon as lines get through again after a stuck reader: a
 * warning, so also a recent error, in one slot. Returns a function that stops it.
 */
export function reportDroppedLines(logger: Logger, output: LossyOutput): () => void {
  output.onRecovered = (dropped) =>
    logger.warn(
      { droppedLogLines: dropped, slot: 'log-output' },
      `dropped ${dropped} log lines: standard output did not keep up (its reader was stuck or slow)`,
    );
  return () => {
    output.onRecovered = undefined;
  };
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
      const message = recordMessage(record) || 'a warning with no message';
      onWarning({ when: new Date(record.time).toISOString(), message, level: record.level }, record.slot);
    },
  };
}

/** A pino record's message as people read it: its text, and its error's when that says more. */
export function recordMessage(record: { msg?: string; err?: { message?: string } }): string {
  const parts = [record.msg, record.err?.message].filter((part): part is string => !!part);
  return [...new Set(parts)].join(': ');
}
