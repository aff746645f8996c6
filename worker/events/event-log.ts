/** Syncthing's event types, in its order (st:lib/events/events.go); the REST names are these. */
export const EVENT_TYPES = [
  'Starting',
  'StartupComplete',
  'DeviceDiscovered',
  'DeviceConnected',
  'DeviceDisconnected',
  'DeviceRejected',
  'PendingDevicesChanged',
  'DevicePaused',
  'DeviceResumed',
  // Syncthing logs it from 1.20 on; {device}.
  'ClusterConfigReceived',
  'LocalChangeDetected',
  'RemoteChangeDetected',
  'LocalIndexUpdated',
  'RemoteIndexUpdated',
  'ItemStarted',
  'ItemFinished',
  'StateChanged',
  'FolderRejected',
  'PendingFoldersChanged',
  'ConfigSaved',
  'DownloadProgress',
  'RemoteDownloadProgress',
  'FolderSummary',
  'FolderCompletion',
  'FolderErrors',
  'FolderScanProgress',
  'FolderPaused',
  'FolderResumed',
  'FolderWatchStateChanged',
  'ListenAddressesChanged',
  'LoginAttempt',
  'Failure',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

export interface SyncdEvent {
  /** Numbered per subscription, from the worker's first ID (see EventLog). */
  id: number;
  /** Numbered across every event this worker logged, from its first ID. */
  globalID: number;
  time: string;
  type: EventType;
  data: unknown;
}

// The disk events have their own endpoint (/rest/events/disk); the default stream leaves them out.
const DISK_TYPES: readonly EventType[] = ['LocalChangeDetected', 'RemoteChangeDetected'];
const DEFAULT_TYPES = EVENT_TYPES.filter((type) => !DISK_TYPES.includes(type));
/** Events each subscription keeps for clients that poll late; older ones are gone. */
export const BUFFERED_EVENTS = 1000;
// Syncthing's maxDurationSinceLastEventReq.
const WATCHED_FOR_MS = 60_000;
// A client can ask for any combination of types: beyond this many, the least recently used goes.
const MAX_SUBSCRIPTIONS = 64;

/**
 * The worker's events, as Syncthing serves them: each distinct set of types is a subscription with its
 * own buffer and numbering, created on its first request (the default set and the disk set exist from
 * the start), and long polls wait for the next event of their set.
 */
export class EventLog {
  readonly #subscriptions = new Map<string, Subscription>();
  readonly #listeners = new Set<(type: EventType, data: unknown) => void>();
  readonly #base: number;
  #globalId: number;
  #closed = false;
  /** When a client last asked for events, and how many wait for them now (see `watched`). */
  #lastAskedAt = Number.NEGATIVE_INFINITY;
  #watching = 0;

  /**
   * IDs start after `base`: 0 (Syncthing's 1) for the first worker, and for each next one past every
   * ID an earlier worker could give, so that a client's `since` stays meaningful across a restart.
   */
  constructor(base = 0) {
    this.#base = base;
    this.#globalId = base;
    this.subscription(DEFAULT_TYPES);
    this.subscription(DISK_TYPES);
  }

  static get defaultTypes(): readonly EventType[] {
    return DEFAULT_TYPES;
  }

  static get diskTypes(): readonly EventType[] {
    return DISK_TYPES;
  }

  log(type: EventType, data: unknown): void {
    this.#globalId += 1;
    const time = new Date().toISOString();
    for (const subscription of this.#subscriptions.values()) {
      subscription.push(type, this.#globalId, time, data);
    }
    for (const listener of this.#listeners) listener(type, data);
  }

  /**
   * Tells `listener` of every event as it is logged, whatever the buffers keep (the metrics count
   * them: http/event-tally.ts); the function returned stops it.
   */
  onEvent(listener: (type: EventType, data: unknown) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** The subscription for exactly these types, made now if none asked for them before. */
  subscription(types: readonly EventType[]): Subscription {
    const key = [...new Set(types)].sort().join(',');
    let subscription = this.#subscriptions.get(key);
    if (subscription) {
      // Most recently used last: eviction takes the first.
      this.#subscriptions.delete(key);
    } else {
      subscription = new Subscription(new Set(types), this.#base);
      if (this.#closed) subscription.close();
      const permanent = 2;
      if (this.#subscriptions.size >= MAX_SUBSCRIPTIONS) {
        const oldest = [...this.#subscriptions.keys()][permanent];
        if (oldest !== undefined) this.#subscriptions.get(oldest)?.close();
        if (oldest !== undefined) this.#subscriptions.delete(oldest);
      }
    }
    this.#subscriptions.set(key, subscription);
    return subscription;
  }

  /** A client asks for events; the returned function tells that its request ended. */
  watch(): () => void {
    this.#watching += 1;
    this.#lastAskedAt = Date.now();
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.#watching -= 1;
      this.#lastAskedAt = Date.now();
    };
  }

  /**
   * Whether a client waits for events, or asked for them within the last minute: Syncthing computes
   * its periodic folder summaries only then (folder_summary.go), as nobody would see them otherwise.
   */
  get watched(): boolean {
    return this.#watching > 0 || Date.now() - this.#lastAskedAt <= WATCHED_FOR_MS;
  }

  /** Ends every wait at once (the worker is stopping): pollers get what there is. */
  close(): void {
    this.#closed = true;
    for (const subscription of this.#subscriptions.values()) subscription.close();
  }
}

export class Subscription {
  readonly #types: ReadonlySet<EventType>;
  readonly #events: SyncdEvent[] = [];
  readonly #waiters = new Set<() => void>();
  #nextId: number;
  #closed = false;

  constructor(types: ReadonlySet<EventType>, base = 0) {
    this.#types = types;
    this.#nextId = base + 1;
  }

  push(type: EventType, globalID: number, time: string, data: unknown): void {
    if (!this.#types.has(type)) return;
    this.#events.push({ id: this.#nextId++, globalID, time, type, data });
    if (this.#events.length > BUFFERED_EVENTS) this.#events.shift();
    this.#wake();
  }

  /**
   * The events after `since`, waiting up to `timeoutMs` for one when there are none yet; `[]` when
   * none came, the wait was `cancelled` (the client went away) or the log closed.
   */
  async since(since: number, timeoutMs: number, cancelled?: AbortSignal): Promise<SyncdEvent[]> {
    const after = () => this.#events.filter((event) => event.id > since);
    const now = after();
    if (now.length > 0 || timeoutMs <= 0 || this.#closed) return now;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#waiters.delete(done);
        cancelled?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      this.#waiters.add(done);
      cancelled?.addEventListener('abort', done);
    });
    return after();
  }

  close(): void {
    this.#closed = true;
    this.#wake();
  }

  #wake(): void {
    for (const waiter of [...this.#waiters]) waiter();
  }
}
