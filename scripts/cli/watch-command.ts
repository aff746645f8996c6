import { ClientError, type ServiceEvent, SyncdClient } from '../../shared/client/client.ts';
import type { Target } from '../../shared/client/target.ts';
import { eventLine } from './event-lines.ts';

export interface WatchOptions {
  /** Event types, comma-separated, as /rest/events takes them; the default set when none. */
  types: string | undefined;
  /** The disk events (/rest/events/disk): files changed here and by others. */
  disk: boolean;
  /** Ends after this many events. */
  count: number | undefined;
  /** Ends after this long. */
  forMs: number | undefined;
  /** Starts after this event ID (as --json shows them), else after the last one so far. */
  since: number | undefined;
  json: boolean;
}

interface Io {
  out(text: string): void;
  err(text: string): void;
}

// Syncthing's own long poll; the call's timeout leaves the service time to answer an empty poll.
const POLL_S = 60;
const RETRY_MS = 1000;

/**
 * `syncd watch`: the events as they happen, one line each: those after the start, or after `since`. A
 * service that goes away (a restart, a stop) is waited for: event IDs go on across workers.
 */
export async function watchCommand(target: Target, options: WatchOptions, io: Io): Promise<void> {
  const client = new SyncdClient({
    address: target.url,
    ca: target.ca,
    apiKey: target.apiKey,
    timeoutMs: (POLL_S + 10) * 1000,
  });
  const deadline = options.forMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + options.forMs;
  const poll = (since: number, timeoutS: number, limit?: number) =>
    client.events({ since, timeoutS, limit, types: options.types, disk: options.disk });
  let since = options.since ?? (await poll(0, 0, 1)).at(-1)?.id ?? 0;
  let shown = 0;
  let gone = false;
  while (Date.now() < deadline && (options.count === undefined || shown < options.count)) {
    const waitS = Math.max(0, Math.min(POLL_S, Math.ceil((deadline - Date.now()) / 1000)));
    let events: ServiceEvent[];
    try {
      if (gone) {
        // Back: a restart goes on numbering, but a service started anew numbers from 1 again, and
        // then its events are all after the last one printed.
        const newest = (await poll(0, 0, 1)).at(-1)?.id ?? 0;
        const anew = newest < since;
        if (anew) since = 0;
        io.err(`syncd: the service at ${target.address} answers again${anew ? ' (started anew)' : ''}`);
        gone = false;
      }
      events = await poll(since, waitS);
    } catch (error) {
      // Not answering (a restart, a stop): said once, then waited for; any other error ends the watch.
      if (!(error instanceof ClientError) || error.code === undefined) throw error;
      if (!gone) io.err(`syncd: the service at ${target.address} does not answer; waiting for it`);
      gone = true;
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
      continue;
    }
    for (const event of events) {
      if (options.count !== undefined && shown >= options.count) break;
      io.out(options.json ? JSON.stringify(event) : eventLine(event));
      shown += 1;
      since = event.id;
    }
  }
}
