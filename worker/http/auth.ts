import { timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/**
 * Checks the API key a request carries in X-API-Key or Authorization: Bearer, in time that does not
 * depend on how much of a guess is right. A guess of another length is compared with the key itself,
 * so that it costs the same; only the length can be learnt, and a generated key's length is public.
 */
export function apiKeyChecker(apiKey: string): (headers: IncomingHttpHeaders) => boolean {
  const expected = Buffer.from(apiKey);
  return (headers) => {
    const given = presentedKey(headers);
    if (given === undefined) return false;
    const buffer = Buffer.from(given);
    const sameLength = buffer.length === expected.length;
    return timingSafeEqual(sameLength ? buffer : expected, expected) && sameLength;
  };
}

/** The key a request presents, if any; X-API-Key wins over Authorization. */
export function presentedKey(headers: IncomingHttpHeaders): string | undefined {
  const header = headers['x-api-key'];
  if (typeof header === 'string' && header !== '') return header;
  const match = /^Bearer +(\S+) *$/i.exec(headers.authorization ?? '');
  return match?.[1];
}
