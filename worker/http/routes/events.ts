import type { FastifyInstance, FastifyPluginOptions, FastifyRequest } from 'fastify';
import { EVENT_TYPES, EventLog, type EventType } from '../../events/event-log.ts';
import { invalidQuery } from '../http-errors.ts';

export interface EventRouteOptions extends FastifyPluginOptions {
  events: EventLog;
}

// Syncthing's default wait; the longest accepted is an hour, so that no poll outlives every client.
const DEFAULT_TIMEOUT_S = 60;
const MAX_TIMEOUT_S = 3600;

/**
 * GET /rest/events (and /rest/events/disk) as Syncthing serves them: `since` the last id seen, `limit`
 * the newest n only, `timeout` seconds to wait for one (0: answer at once), `events` the types wanted.
 */
export async function eventRoutes(app: FastifyInstance, options: EventRouteOptions): Promise<void> {
  const poll = (defaultTypes: readonly EventType[]) => async (request: FastifyRequest) => {
    const query = request.query as Record<string, string | undefined>;
    const since = count(query.since, 'since', 0);
    const limit = count(query.limit, 'limit', 0);
    const timeoutS = Math.min(count(query.timeout, 'timeout', DEFAULT_TIMEOUT_S), MAX_TIMEOUT_S);
    const subscription = options.events.subscription(types(query.events) ?? defaultTypes);
    // A client that goes away stops its wait.
    const gone = new AbortController();
    request.raw.socket?.once('close', () => gone.abort());
    const ended = options.events.watch();
    try {
      const events = await subscription.since(since, timeoutS * 1000, gone.signal);
      return limit > 0 && limit < events.length ? events.slice(-limit) : events;
    } finally {
      ended();
    }
  };
  app.get('/rest/events', poll(EventLog.defaultTypes));
  app.get('/rest/events/disk', poll(EventLog.diskTypes));
}

function count(text: string | undefined, name: string, fallback: number): number {
  if (text === undefined || text === '') return fallback;
  // Up to 15 digits: event IDs of later workers pass 2^32 (see EVENT_IDS_PER_WORKER), and stay safe integers.
  if (!/^\d{1,15}$/.test(text))
    throw invalidQuery(`${name} must be a whole number of at least 0, not "${text}"`);
  return Number(text);
}

function types(text: string | undefined): EventType[] | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  const names = text.split(',').map((name) => name.trim());
  const unknown = names.find((name) => !(EVENT_TYPES as readonly string[]).includes(name));
  if (unknown !== undefined) {
    throw invalidQuery(`"${unknown}" is not an event type; the types are ${EVENT_TYPES.join(', ')}`);
  }
  return names as EventType[];
}
