import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyRequest } from 'fastify';
import { hostAllowed } from '../../shared/hosts.ts';
import { apiKeyChecker } from './auth.ts';
import { HttpError, headersTooLarge, hostNotAllowed } from './http-errors.ts';
import { MAX_HEADER_BYTES, MAX_HEADER_COUNT } from './limits.ts';

/** The key and hosts checked on each request (they change when a saved configuration changes them). */
export interface Access {
  apiKey: string;
  allowedHosts: string[] | null;
}

/**
 * The checks every request passes first, in this order: the size of its headers, its Host, its key.
 * True: the key is right (the connection is proven, told to `proven`); false: no key or a wrong one
 * (whether it needs one depends on the route); an error: refused whatever the route.
 */
export function admission(
  access: Access,
  proven?: (socket: Socket) => void,
): (raw: IncomingMessage) => HttpError | boolean {
  let checkedKey = access.apiKey;
  let keyMatches = apiKeyChecker(checkedKey);
  return (raw: IncomingMessage): HttpError | boolean => {
    const rawHeaders = raw.rawHeaders;
    if (rawHeaders.length > 2 * MAX_HEADER_COUNT || headerBytes(rawHeaders) > MAX_HEADER_BYTES) {
      return headersTooLarge(rawHeaders.length / 2);
    }
    // Before the key is even looked at: a page whose name was rebound to this address is refused.
    if (!hostAllowed(raw.headers.host, access.allowedHosts)) return hostNotAllowed(raw.headers.host ?? '');
    if (access.apiKey !== checkedKey) {
      checkedKey = access.apiKey;
      keyMatches = apiKeyChecker(checkedKey);
    }
    if (!keyMatches(raw.headers)) return false;
    proven?.(raw.socket);
    return true;
  };
}

/** Whether a request may go without the key: the noauth routes only. */
export function noKeyNeeded(request: FastifyRequest): boolean {
  const route = request.routeOptions.url;
  if (route !== undefined) return route.startsWith('/rest/noauth/');
  // An unknown path under /rest/noauth/ gets its 404 without a key, spelled plainly only.
  const path = request.url.split('?', 1)[0] as string;
  return path.startsWith('/rest/noauth/') && !/\/\/|\/\.\.?(\/|$)/.test(path);
}

function headerBytes(rawHeaders: string[]): number {
  // Each line is NAME: VALUE and a line break.
  let bytes = 0;
  for (const part of rawHeaders) bytes += part.length + 2;
  return bytes;
}
