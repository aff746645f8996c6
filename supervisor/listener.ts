import { createServer, type Server } from 'node:net';
import { type Address, formatAddress } from '../shared/address.ts';
import { SettingError, settingLabel } from '../shared/settings.ts';

/**
 * Binds the service's address. Connections are accepted paused: the supervisor never reads from them,
 * it hands them to a worker, which reads from the start.
 */
export function bindListener(address: Address): Promise<{ server: Server; bound: Address }> {
  const server = createServer({ pauseOnConnect: true });
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      const why = reasons[error.code ?? ''] ?? error.message;
      reject(
        new SettingError(settingLabel('address'), `cannot listen on ${formatAddress(address)}: ${why}`, {
          cause: error,
        }),
      );
    });
    server.listen({ host: address.host, port: address.port, exclusive: true }, () => {
      const bound = server.address();
      if (bound === null || typeof bound === 'string') throw new Error('a TCP listener has no TCP address');
      resolve({ server, bound: { host: bound.address, port: bound.port } });
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
