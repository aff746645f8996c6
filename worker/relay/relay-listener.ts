import { formatAddress } from '../../shared/address.ts';
import type { Logger } from '../../shared/logger.ts';
import type { DeviceCredentials } from '../bep/tls-options.ts';
import { openRelayConnection, parseRelayUrl, type RelayUrl, unexpected } from './relay-connection.ts';
import { RESPONSE_SUCCESS, type SessionInvitation } from './relay-messages.ts';
import { relaysOfPool } from './relay-pool.ts';

// lib/relay/client (Syncthing 1.19): the connect timeout relay_listen.go gives, and how long a joined
// connection may go without a message from the relay (it pings every minute) before it is dropped.
const CONNECT_TIMEOUT_MS = 10_000;
const SILENCE_TIMEOUT_MS = 2 * 60_000;
// After a relay (or every relay of a pool) could not be joined: the first retry, and the longest wait.
const RETRY_FIRST_MS = 10_000;
const RETRY_MAX_MS = 60_000;

export interface RelayListenerOptions {
  credentials: DeviceCredentials;
  logger: Logger;
  /** A device asked the relay for a session with this one. */
  /** `relayIp`: the relay's address its connection reached, for an invitation that names none. */
  invited: (invitation: SessionInvitation, relay: RelayUrl, relayIp: string) => void;
}

/** What Syncthing's connectionServiceStatus says of a relay listener. */
export interface RelayStatus {
  error: string | null;
  /** The relay joined now, as its address (for a pool, the relay picked from it). */
  url: string | null;
}

/**
 * One relay listen address (relay://… or a pool, dynamic+https://…): joins the relay and stays joined,
 * answering its pings and passing on each session invitation; a pool's relays are tried in turn
 * (lib/relay/client static.go and dynamic.go). A relay that cannot be joined, or drops the connection,
 * is tried again after a while.
 */
export class RelayListener {
  readonly text: string;
  readonly #options: RelayListenerOptions;
  #status: RelayStatus = { error: null, url: null };
  #stopped = false;
  readonly #abort = new AbortController();
  #close: (() => void) | undefined;
  #wake: (() => void) | undefined;
  readonly #done: Promise<void>;

  constructor(text: string, options: RelayListenerOptions) {
    this.text = text;
    this.#options = options;
    this.#done = this.#run();
  }

  get status(): RelayStatus {
    return this.#status;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#abort.abort();
    this.#close?.();
    this.#wake?.();
    await this.#done;
  }

  async #run(): Promise<void> {
    let failures = 0;
    const pool = /^dynamic\+https?:\/\//i.test(this.text);
    while (!this.#stopped) {
      let joined = false;
      try {
        const relays = await this.#candidates(pool);
        for (const relay of relays) {
          if (this.#stopped) return;
          try {
            await this.#serve(relay, () => {
              joined = true;
            });
          } catch (error) {
            this.#failed(relay, error as Error);
          }
        }
        if (pool && !joined) this.#failed(undefined, new Error('could not find a connectable relay'));
      } catch (error) {
        this.#failed(undefined, error as Error);
      }
      failures = joined ? 1 : failures + 1;
      await this.#sleep(Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** (failures - 1)));
    }
  }

  async #candidates(pool: boolean): Promise<RelayUrl[]> {
    if (pool) return relaysOfPool(this.text.slice('dynamic+'.length), this.#abort.signal);
    const relay = parseRelayUrl(this.text);
    if (typeof relay === 'string') throw new Error(relay);
    return [relay];
  }

  /** Joins `relay` and serves it until the connection ends; rejects with why it ended. */
  async #serve(relay: RelayUrl, joined: () => void): Promise<void> {
    const { credentials, logger, invited } = this.#options;
    const connection = await openRelayConnection(relay, credentials, CONNECT_TIMEOUT_MS);
    this.#close = () => connection.close();
    if (this.#stopped) connection.close();
    try {
      connection.send({ type: 'JoinRelayRequest' });
      const answer = await connection.next(CONNECT_TIMEOUT_MS);
      if (answer.type !== 'Response' || answer.code !== RESPONSE_SUCCESS) throw unexpected(answer);
      this.#status = { error: null, url: relay.text };
      joined();
      logger.info({ relay: relay.text }, `joined relay relay://${formatAddress(relay)}`);
      for (;;) {
        const message = await connection.next(SILENCE_TIMEOUT_MS);
        if (message.type === 'Ping') connection.send({ type: 'Pong' });
        else if (message.type === 'SessionInvitation')
          invited(message.invitation, relay, connection.socket.remoteAddress ?? relay.host);
        else throw unexpected(message);
      }
    } finally {
      this.#close = undefined;
      connection.close();
      if (this.#status.url === relay.text) this.#status = { error: null, url: null };
    }
  }

  #failed(relay: RelayUrl | undefined, error: Error): void {
    if (this.#stopped) return;
    const where = relay ? `relay://${formatAddress(relay)}` : this.text;
    // One relay of a pool failing is the pool's business (Syncthing logs it at debug).
    const pooled = relay !== undefined && relay.text !== this.text;
    if (this.#status.error !== error.message)
      this.#options.logger[pooled ? 'debug' : 'info'](
        { relay: where, err: error },
        `relay ${where}: ${error.message}`,
      );
    this.#status = { error: error.message, url: null };
  }

  #sleep(ms: number): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.#wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}
