import { isIPv6 } from 'node:net';

export interface AuthFailureOptions {
  /** Failures from one client within the window after which it is answered 429. */
  limit?: number;
  /** Failures from all clients together within the window after which every keyless request is. */
  globalLimit?: number;
  windowMs?: number;
  /** How many clients are remembered at most; the oldest are forgotten first. */
  maxClients?: number;
  now?: () => number;
}

/** What a failure is worth telling: the first of each window, with how many came since the last line. */
export type FailureReport = { log: false } | { log: true; since: number };

/**
 * Counts failed API keys, so that guessing the key is slowed to a crawl: past `limit` failures from one
 * client within the window, or `globalLimit` from all of them together, further keyless or wrong-key
 * requests are answered 429 until the window has passed. A client is an address, but all of loopback
 * (127.0.0.0/8) is one client, as is an IPv6 /64: one machine holds them all. A request with the right
 * key is never counted nor slowed: on loopback every client shares one address, and blocking it would
 * let anyone lock the key holder out.
 */
export class AuthFailures {
  readonly #clients = new Map<string, number[]>();
  readonly #all: number[] = [];
  readonly #limit: number;
  readonly #globalLimit: number;
  readonly #windowMs: number;
  readonly #maxClients: number;
  readonly #now: () => number;
  #loggedAt = -Infinity;
  #sinceLogged = 0;

  constructor(options: AuthFailureOptions = {}) {
    this.#limit = options.limit ?? 10;
    this.#globalLimit = options.globalLimit ?? 100;
    this.#windowMs = options.windowMs ?? 60_000;
    this.#maxClients = options.maxClients ?? 10_000;
    this.#now = options.now ?? Date.now;
  }

  /** Seconds the client must wait before its next try, or 0 when it may try now. */
  retryAfter(address: string): number {
    const since = this.#now() - this.#windowMs;
    const mine = this.#current(clientOf(address), since);
    const all = prune(this.#all, since, this.#globalLimit);
    const waits = [mine && wait(mine, this.#limit), wait(all, this.#globalLimit)];
    const oldest = Math.min(...waits.filter((w): w is number => w !== undefined));
    if (!Number.isFinite(oldest)) return 0;
    return Math.max(1, Math.ceil((oldest + this.#windowMs - this.#now()) / 1000));
  }

  /** Records a failure; says whether it deserves a log line (one per window, for all clients together). */
  record(address: string): FailureReport {
    const now = this.#now();
    const client = clientOf(address);
    let failures = this.#current(client, now - this.#windowMs);
    if (!failures) {
      failures = [];
      this.#clients.set(client, failures);
      if (this.#clients.size > this.#maxClients)
        this.#clients.delete(this.#clients.keys().next().value as string);
    }
    // Only the newest `limit` matter for the verdict; keep no more.
    failures.push(now);
    if (failures.length > this.#limit) failures.shift();
    this.#all.push(now);
    if (this.#all.length > this.#globalLimit) this.#all.shift();
    this.#sinceLogged += 1;
    if (now - this.#loggedAt < this.#windowMs) return { log: false };
    this.#loggedAt = now;
    const since = this.#sinceLogged - 1;
    this.#sinceLogged = 0;
    return { log: true, since };
  }

  /** Takes back the newest failure of the client: one counted before it was known (a password check). */
  pardon(address: string): void {
    this.#clients.get(clientOf(address))?.pop();
    this.#all.pop();
    this.#sinceLogged = Math.max(0, this.#sinceLogged - 1);
  }

  #current(client: string, since: number): number[] | undefined {
    const failures = this.#clients.get(client);
    return failures && prune(failures, since, this.#limit);
  }
}

/** The client an address belongs to: loopback is one, an IPv6 /64 is one, any other address itself. */
export function clientOf(address: string): string {
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  if (/^127\.\d+\.\d+\.\d+$/.test(v4) || v4 === '::1') return 'loopback';
  if (!isIPv6(v4)) return v4;
  return `${prefix64(v4)}::/64`;
}

/** The first four groups of an IPv6 address, each in its shortest form. */
function prefix64(address: string): string {
  const [head = '', tail] = (address.split('%', 1)[0] ?? '').split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':');
  const zeros = tail === undefined ? [] : Array<string>(8 - headGroups.length - tailGroups.length).fill('0');
  return [...headGroups, ...zeros, ...tailGroups]
    .slice(0, 4)
    .map((group) => Number.parseInt(group, 16).toString(16))
    .join(':');
}

function prune(times: number[], since: number, keep: number): number[] {
  while (times.length > 0 && (times[0] as number) <= since) times.shift();
  while (times.length > keep) times.shift();
  return times;
}

/** When the window of `times` began, once `limit` is reached; undefined below it. */
function wait(times: number[], limit: number): number | undefined {
  return times.length >= limit ? (times[times.length - limit] as number) : undefined;
}
