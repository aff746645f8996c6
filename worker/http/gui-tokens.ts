import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** How long a CSRF token and a login session last: a GUI left open reloads its page within that. */
export const CSRF_TOKEN_LIFETIME_MS = 30 * 24 * 3600 * 1000;
export const SESSION_LIFETIME_MS = 7 * 24 * 3600 * 1000;

export type TokenKind = 'csrf' | 'session';

/**
 * The CSRF tokens and login sessions of the web GUI, as tokens any worker can check without asking
 * another: a random part, the time it was made, and an HMAC of both under a key only this device
 * knows (derived from its private key). A restart therefore keeps every GUI logged in and its CSRF
 * token good, where Syncthing keeps a list (csrftokens.txt, its session store). A session is bound
 * to the user and the password hash it was opened with: changing either ends it everywhere.
 */
export class GuiTokens {
  readonly #key: Buffer;
  readonly #now: () => number;

  constructor(secret: Buffer | string, now: () => number = Date.now) {
    this.#key = createHmac('sha256', 'syncd gui tokens').update(secret).digest();
    this.#now = now;
  }

  make(kind: TokenKind, binding = ''): string {
    const body = `${randomBytes(12).toString('base64url')}.${this.#now().toString(36)}`;
    return `${body}.${this.#mac(kind, body, binding)}`;
  }

  /** Whether `token` was made here for `kind` (and `binding`), and has not expired. */
  valid(kind: TokenKind, token: string | undefined, binding = ''): boolean {
    if (token === undefined || token.length > 200) return false;
    const parts = token.split('.');
    if (parts.length !== 3) return false;
    const [nonce, time, mac] = parts as [string, string, string];
    const expected = Buffer.from(this.#mac(kind, `${nonce}.${time}`, binding));
    const given = Buffer.from(mac);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return false;
    const made = Number.parseInt(time, 36);
    const lifetime = kind === 'csrf' ? CSRF_TOKEN_LIFETIME_MS : SESSION_LIFETIME_MS;
    return Number.isFinite(made) && made <= this.#now() + 60_000 && this.#now() - made < lifetime;
  }

  #mac(kind: TokenKind, body: string, binding: string): string {
    return createHmac('sha256', this.#key)
      .update(`${kind}\0${binding}\0${body}`)
      .digest('base64url')
      .slice(0, 32);
  }
}
