import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/**
 * Checks the API key a request carries in X-API-Key or Authorization: Bearer. Both sides are hashed
 * first so that the comparison takes the same time whatever the length or content of the guess.
 */
export function apiKeyChecker(apiKey: string): (headers: IncomingHttpHeaders) => boolean {
  const expected = digest(apiKey);
  return (headers) => {
    const given = presentedKey(headers);
    return given !== undefined && timingSafeEqual(digest(given), expected);
  };
}

/** The key a request presents, if any; X-API-Key wins over Authorization. */
export function presentedKey(headers: IncomingHttpHeaders): string | undefined {
  const header = headers['x-api-key'];
  if (typeof header === 'string' && header !== '') return header;
  const match = /^Bearer +(\S+) *$/i.exec(headers.authorization ?? '');
  return match?.[1];
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
