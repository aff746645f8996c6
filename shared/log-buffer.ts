import type pino from 'pino';
import { recordMessage } from './logger.ts';

/** One line of the log as /rest/system/log answers it (Syncthing's logger.Line). */
export interface LogLine {
  /** RFC 3339 with nine fraction digits: see LogBuffer. */
  when: string;
  message: string;
  /** Syncthing's levels: 0 debug, 1 verbose, 2 info, 3 warning. */
  level: number;
}

/** Syncthing's: the last 250 lines, and the first 10 of the process's kept (lib/logger recorder). */
export const LOG_BUFFER_LINES = 250;
export const LOG_BUFFER_FIRST = 10;
/** A line longer than this keeps its start: the buffer is bounded in bytes as well as lines. */
export const LOG_LINE_MAX_CHARS = 4096;

interface Entry {
  line: LogLine;
  /** Milliseconds since the epoch, and the line's place among those of the same millisecond. */
  ms: number;
  seq: number;
}

/**
 * The recent log lines of this worker, behind GET /rest/system/log and log.txt, as Syncthing's
 * recorder keeps them: the first lines of the process, then the newest, with a "..." line between
 * once some were dropped. A client asks for the lines after the `when` of the last it has; pino's
 * times are milliseconds, so the fraction's last six digits number the lines within one millisecond,
 * and "after" never skips a line written in the same millisecond as the one given.
 */
export class LogBuffer {
  readonly #first: Entry[] = [];
  readonly #last: Entry[] = [];
  #dropped = false;
  #lastMs = -1;
  #seq = 0;

  add(ms: number, message: string, level: number): void {
    this.#seq = ms === this.#lastMs ? this.#seq + 1 : 0;
    this.#lastMs = ms;
    const text = message.length > LOG_LINE_MAX_CHARS ? `${message.slice(0, LOG_LINE_MAX_CHARS)}…` : message;
    const entry: Entry = {
      line: { when: formatWhen(ms, this.#seq), message: text, level },
      ms,
      seq: this.#seq,
    };
    if (this.#first.length < LOG_BUFFER_FIRST) {
      this.#first.push(entry);
      return;
    }
    this.#last.push(entry);
    if (this.#last.length > LOG_BUFFER_LINES - LOG_BUFFER_FIRST) {
      this.#last.shift();
      this.#dropped = true;
    }
  }

  /** The lines written after `since` (all of them when undefined), oldest first. */
  since(since?: { ms: number; seq: number }): LogLine[] {
    const after = (entry: Entry) =>
      since === undefined || entry.ms > since.ms || (entry.ms === since.ms && entry.seq > since.seq);
    const lines = this.#first.filter(after).map((entry) => entry.line);
    const rest = this.#last.filter(after).map((entry) => entry.line);
    // Where lines were dropped, as Syncthing marks it.
    if (this.#dropped && lines.length > 0 && rest.length > 0) {
      lines.push({ when: rest[0]!.when, message: '...', level: 2 });
    }
    return [...lines, ...rest];
  }

  /** A pino stream that records each line written through it. */
  stream(): pino.DestinationStream {
    return {
      write: (json: string) => {
        const record = JSON.parse(json) as {
          time: number;
          level: number;
          msg?: string;
          err?: { message?: string };
        };
        this.add(record.time, recordMessage(record), syncthingLevel(record.level));
      },
    };
  }
}

/** pino's numbers (10 trace … 60 fatal) as Syncthing's four levels. */
export function syncthingLevel(pinoLevel: number): number {
  if (pinoLevel < 30) return 0;
  if (pinoLevel < 40) return 2;
  return 3;
}

function formatWhen(ms: number, seq: number): string {
  const iso = new Date(ms).toISOString(); // 2026-11-27T06:30:00.123Z
  return `${iso.slice(0, -1)}${String(seq % 1_000_000).padStart(6, '0')}Z`;
}

/**
 * A `since` as clients send it: RFC 3339 with any fraction and zone. Its fraction beyond the
 * millisecond is the line's number within it (see LogBuffer); undefined when it is not a time.
 */
export function parseSince(text: string): { ms: number; seq: number } | undefined {
  const match = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$/i.exec(text.trim());
  if (!match) return undefined;
  const [, seconds, fraction = '', zone] = match;
  const whole = Date.parse(`${seconds}${zone}`);
  if (Number.isNaN(whole)) return undefined;
  const digits = fraction.padEnd(9, '0');
  return { ms: whole + Number(digits.slice(0, 3)), seq: Number(digits.slice(3)) };
}
