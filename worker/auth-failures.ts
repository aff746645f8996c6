export interface AuthFailureOptions {
  /** Failures from one client address within the window after which it is answered 429. */
  limit?: number;
  windowMs?: number;
  /** How many client addresses are remembered at most; the oldest are forgotten first. */
  maxClients?: number;
  now?: () => number;
}

interface Client {
  failures: number[];
  loggedAt: number;
}

/**
 * Counts failed API keys per client address, so that guessing the key is slowed to a crawl: past
 * `limit` failures within the window, further keyless or wrong-key requests from that address are
 * answered 429 until the window has passed. A request with the right key is never counted nor slowed:
 * on loopback every client shares one address, and blocking it would let anyone lock the key holder out.
 */
export class AuthFailures {
  readonly #clients = new Map<string, Client>();
  readonly #limit: number;
  readonly #windowMs: number;
  readonly #maxClients: number;
  readonly #now: () => number;

  constructor(options: AuthFailureOptions = {}) {
    this.#limit = options.limit ?? 10;
    this.#windowMs = options.windowMs ?? 60_000;
    this.#maxClients = options.maxClients ?? 10_000;
    this.#now = options.now ?? Date.now;
  }

  /** Seconds the client must wait before its next try, or 0 when it may try now. */
  retryAfter(address: string): number {
    const client = this.#current(address);
    if (!client || client.failures.length < this.#limit) return 0;
    const oldest = client.failures[client.failures.length - this.#limit] as number;
    return Math.max(1, Math.ceil((oldest + this.#windowMs - this.#now()) / 1000));
  }

  /** Records a failure; true when it is the first of this client's window, the one worth a log line. */
  record(address: string): boolean {
    const now = this.#now();
    let client = this.#current(address);
    if (!client) {
      client = { failures: [], loggedAt: -Infinity };
      this.#clients.set(address, client);
      if (this.#clients.size > this.#maxClients)
        this.#clients.delete(this.#clients.keys().next().value as string);
    }
    client.failures.push(now);
    // Only the newest `limit` matter for the verdict; keep no more.
    if (client.failures.length > this.#limit) client.failures.shift();
    if (now - client.loggedAt < this.#windowMs) return false;
    client.loggedAt = now;
    return true;
  }

  #current(address: string): Client | undefined {
    const client = this.#clients.get(address);
    if (!client) return undefined;
    const since = this.#now() - this.#windowMs;
    while (client.failures.length > 0 && (client.failures[0] as number) <= since) client.failures.shift();
    return client;
  }
}
