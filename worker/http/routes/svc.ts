import { randomInt } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { canonicalDeviceId, deviceIdProblem } from '../../../shared/device-id.ts';
import { invalidQuery } from '../http-errors.ts';

// Syncthing's lib/rand alphabet: letters and digits that cannot be mistaken for one another.
const ALPHABET = '2345679abcdefghijkmnopqrstuvwxyzACDEFGHJKLMNPQRSTUVWXYZ';
const DEFAULT_LENGTH = 32;
/** Syncthing sets none; a string is made in memory at once, so a length is bounded here. */
export const MAX_RANDOM_LENGTH = 4096;

/**
 * The helpers Syncthing's GUI calls under /rest/svc (lib/api/api.go: getRandomString, getDeviceID,
 * getLang), in its shapes; registered under that prefix. The usage report is not here: syncd sends
 * none, and its preview is another issue's.
 */
export async function svcRoutes(app: FastifyInstance): Promise<void> {
  // A new folder ID (length 10) or API key (32), as the GUI asks for them.
  app.get('/random/string', async (request) => ({ random: randomString(lengthOf(request)) }));

  // Checked as the user types in the GUI's Add Device dialog: always 200, the problem in `error`.
  app.get('/deviceid', async (request) => {
    const id = (request.query as { id?: unknown }).id;
    const text = typeof id === 'string' ? id : '';
    // Syncthing's answer for nothing given.
    if (text === '') return { id: '' };
    const problem = deviceIdProblem(text);
    return problem === undefined ? { id: canonicalDeviceId(text) } : { error: `"${text}": ${problem}` };
  });

  // The browser's languages, for the GUI's choice of translation: each tag lower-cased, in the
  // header's order, without its weight.
  app.get('/lang', async (request) => {
    const header = request.headers['accept-language'] ?? '';
    return header.split(',').map((part) => (part.split(';')[0] ?? '').trim().toLowerCase());
  });
}

function lengthOf(request: FastifyRequest): number {
  const given = (request.query as { length?: unknown }).length;
  const length = typeof given === 'string' ? Number.parseInt(given, 10) : Number.NaN;
  // Syncthing's: missing, not a number or not positive is the default.
  if (!Number.isFinite(length) || length <= 0) return DEFAULT_LENGTH;
  if (length > MAX_RANDOM_LENGTH) {
    throw invalidQuery(`length must be at most ${MAX_RANDOM_LENGTH}, not ${length}`);
  }
  return length;
}

function randomString(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHABET[randomInt(ALPHABET.length)];
  return out;
}
