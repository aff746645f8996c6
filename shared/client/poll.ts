import { connect } from 'node:net';

/** Calls `check` every `everyMs` until it gives a value; undefined once `timeoutMs` has passed without. */
export async function pollUntil<T>(
  timeoutMs: number,
  check: () => Promise<T | undefined>,
  everyMs = 25,
): Promise<T | undefined> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await check();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  return undefined;
}

/** 'connected', or the error code (ECONNREFUSED…) of one TCP connection attempt to HOST:PORT. */
export function connectOutcome(address: string): Promise<string> {
  const at = address.lastIndexOf(':');
  const host = address.slice(0, at).replace(/^\[|\]$/g, '');
  return new Promise((resolve) => {
    const socket = connect({ host, port: Number(address.slice(at + 1)) });
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}
