import { createServer, type Server, type Socket } from 'node:net';
import { type Address, formatAddress } from '../shared/address.ts';
import type { ListenerName } from '../shared/ipc/protocol.ts';
import { SettingError, settingLabel } from '../shared/settings.ts';

export interface Listener {
  server: Server;
  bound: Address;
  /**
   * Sends every connection to `accept` from now on, first those accepted since the bind: a client may
   * connect the moment the port opens, before the supervisor is ready to take it.
   */
  startAccepting(accept: (socket: Socket) => void): void;
}

/**
 * Binds the service's address. Connections are accepted paused: the supervisor never reads from them,
 * it hands them to a worker, which reads from the start.
 */
export function bindListener(
  address: Address & { ipv6Only?: boolean },
  label = settingLabel('address'),
): Promise<Listener> {
  const server = createServer({ pauseOnConnect: true });
  const early: Socket[] = [];
  let accept = (socket: Socket): void => {
    early.push(socket);
  };
  server.on('connection', (socket) => accept(socket));
  const startAccepting = (next: (socket: Socket) => void) => {
    accept = next;
    for (const socket of early.splice(0)) next(socket);
  };
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      const why = reasons[error.code ?? ''] ?? error.message;
      reject(
        new SettingError(label, `cannot listen on ${formatAddress(address)}: ${why}`, {
          cause: error,
        }),
      );
    });
    const { host, port, ipv6Only = false } = address;
    server.listen({ host, port, exclusive: true, ipv6Only }, () => {
      const bound = server.address();
      if (bound === null || typeof bound === 'string') throw new Error('a TCP listener has no TCP address');
      resolve({ server, bound: { host: bound.address, port: bound.port }, startAccepting });
    });
  });
}

const reasons: Record<string, string> = {
  EADDRINUSE: 'the port is already in use (EADDRINUSE)',
  EACCES: 'permission denied: ports below 1024 need privileges (EACCES)',
  EADDRNOTAVAIL: 'no interface of this machine has that address (EADDRNOTAVAIL)',
  ENOTFOUND: 'the host name does not resolve (ENOTFOUND)',
  EAI_AGAIN: 'the host name does not resolve (EAI_AGAIN)',
};

export interface PendingListener {
  bound: Address;
  commit(): Listener;
  abort(): void;
}

/**
 * The listening sockets the supervisor owns, by name; a name may have several (`sync` has one per
 * listen address), each under a slot of its own. Binding a slot that is bound already replaces its
 * socket without refusing a connection: the new one listens first, then the old one stops accepting
 * (connections it accepted are served as usual).
 */
export class Listeners {
  readonly #bound = new Map<string, { name: ListenerName; listener: Listener }>();
  #accept: ((name: ListenerName, socket: Socket) => void) | undefined;

  async bind(name: ListenerName, address: Address, label?: string): Promise<Listener> {
    return (await this.prepare(name, address, label)).commit();
  }

  /**
   * Binds a new socket for `slot` (one of `name`'s) and keeps the old one accepting until `commit`
   * swaps them; `abort` closes the new one instead. A change that must not half happen binds first,
   * then does the rest.
   */
  async prepare(
    name: ListenerName,
    address: Address & { ipv6Only?: boolean },
    label?: string,
    slot: string = name,
  ): Promise<PendingListener> {
    const listener = await bindListener(address, label);
    return {
      bound: listener.bound,
      commit: () => {
        const old = this.#bound.get(slot);
        this.#bound.set(slot, { name, listener });
        const accept = this.#accept;
        if (accept) listener.startAccepting((socket) => accept(name, socket));
        old?.listener.server.close();
        return listener;
      },
      abort: () => listener.server.close(),
    };
  }

  /** Stops listening on `slot`; connections accepted so far are served as usual. */
  unbind(slot: string): void {
    this.#bound.get(slot)?.listener.server.close();
    this.#bound.delete(slot);
  }

  get(slot: string): Listener | undefined {
    return this.#bound.get(slot)?.listener;
  }

  /** Sends every connection of every listener to `accept` from now on, those accepted so far first. */
  startAccepting(accept: (name: ListenerName, socket: Socket) => void): void {
    this.#accept = accept;
    for (const { name, listener } of this.#bound.values())
      listener.startAccepting((socket) => accept(name, socket));
  }

  close(): void {
    for (const { listener } of this.#bound.values()) listener.server.close();
  }
}
