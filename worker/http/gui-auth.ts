import type { FastifyRequest } from 'fastify';
import { passwordMatches } from '../../shared/gui-password.ts';
import type { AuthFailures } from './auth-failures.ts';
import { clientOf } from './auth-failures.ts';
import { GuiTokens, SESSION_LIFETIME_MS } from './gui-tokens.ts';
import {
  apiKeyNeeded,
  type HttpError,
  guiLocalOnly,
  loginFailed,
  loginRequired,
  notLoggedIn,
  tooManyFailures,
} from './http-errors.ts';

export interface GuiAuthOptions {
  /** This device's ID: the cookies' and header's names carry its first five characters. */
  deviceId: string;
  /** The key the tokens are made under (the device's private key). */
  secret: Buffer | string;
  /** The configured GUI user and password hash, as they are now. */
  credentials: () => { user: string; password: string };
  failures: AuthFailures;
  /** Whether the connections are HTTPS: cookies are then sent over HTTPS only. */
  secure: boolean;
  /**
   * Logging in by a form on the page, as Syncthing 2.x's GUI and syncd's own do: the GUI's files load
   * without a session, and a call without one is refused 403, without asking the browser for HTTP
   * Basic credentials; while no GUI password is set, the page logs in with the API key. Else, as
   * 1.19's GUI: every page and call asks for them, and without a password this machine gets in.
   */
  loginForm?: boolean;
}

/** A request let in by the GUI's credentials, with the cookies to set on its answer. */
export interface GuiAdmitted {
  cookies: string[];
  /** Let in by a password (a session, a login): its connection counts as the key's would. */
  proven: boolean;
}

/**
 * The asset server's routes (routes/gui-assets.ts): pages, which need no CSRF token; nor does /metrics,
 * as Syncthing checks the token under /rest only (lib/api/api.go), so that a browser logged in reads it.
 */
const PAGE_ROUTES: ReadonlySet<string> = new Set(['/', '/*', '/meta.js', '/themes.json', '/qr/', '/metrics']);
/** The GUI's own files, which a login form needs before the login (2.x's isNoAuthPath in api_auth.go). */
const FILE_ROUTES: ReadonlySet<string> = new Set(['/', '/*']);
/** Password checks running at once; more are answered 429 (see login). */
const MAX_CHECKS_AT_ONCE = 2;

/**
 * The web GUI's way in, as Syncthing's (lib/api/api.go csrfMiddleware, basicAuthAndSessionMiddleware;
 * 2.x's password login): beside the API key, a request to /rest carries the CSRF token the GUI's page
 * set as a cookie (`CSRF-Token-XXXXX`) in the header `X-CSRF-Token-XXXXX`. Pages need no token. Then,
 * when a GUI user and password are set, a session cookie (`sessionid-XXXXX`) or HTTP Basic credentials,
 * which open a session; when they are not, only this machine (loopback) is let in: Syncthing would let
 * any address in, and warn. Wrong passwords count with wrong keys (AuthFailures): past the limit, 429.
 */
export class GuiAuth {
  readonly #options: GuiAuthOptions;
  readonly #tokens: GuiTokens;
  readonly #short: string;
  #checking = 0;

  constructor(options: GuiAuthOptions) {
    this.#options = options;
    this.#tokens = new GuiTokens(options.secret);
    this.#short = options.deviceId.slice(0, 5);
  }

  get csrfCookie(): string {
    return `CSRF-Token-${this.#short}`;
  }

  get sessionCookie(): string {
    return `sessionid-${this.#short}`;
  }

  /** A Set-Cookie for a new CSRF token, when the request has no good one: pages send it with them. */
  csrfCookieFor(request: FastifyRequest): string | undefined {
    if (this.#tokens.valid('csrf', cookiesOf(request)[this.csrfCookie])) return undefined;
    // Read by the GUI's script, so not HttpOnly; never sent by another site's page.
    return `${this.csrfCookie}=${this.#tokens.make('csrf')}; Path=/; SameSite=Strict${this.#secureFlag()}`;
  }

  /**
   * A request without the API key: let in by the GUI's credentials, refused with the reason, or
   * undefined when it carries none of them (a /rest request without a good CSRF token), for the key's
   * answer to refuse.
   */
  async admit(request: FastifyRequest): Promise<GuiAdmitted | HttpError | undefined> {
    // Decided by the route the router matched, never by the path as sent: `/%72est/…` is routed to
    // /rest, and must carry the token as /rest does. Only the asset server's own routes are pages.
    const route = request.routeOptions.url ?? '';
    // They hold nothing of this device's: the page then asks for the user and password itself.
    if (this.#options.loginForm && FILE_ROUTES.has(route)) return { cookies: [], proven: false };
    if (!PAGE_ROUTES.has(route)) {
      const header = request.headers[`x-csrf-token-${this.#short.toLowerCase()}`];
      if (!this.#tokens.valid('csrf', typeof header === 'string' ? header : undefined)) return undefined;
    }
    const { user, password } = this.#options.credentials();
    const client = request.socket.remoteAddress ?? '';
    if (user === '' || password === '') {
      // syncd's own GUI then logs in with the API key (its page asks for it, or takes it from the
      // link `npm start` prints at a terminal): a token any process of this machine can take from a
      // page lets nobody in.
      if (this.#options.loginForm) return apiKeyNeeded();
      // Not proven: any process of this machine can load a page, and must not hold connections so.
      return clientOf(client) === 'loopback' ? { cookies: [], proven: false } : guiLocalOnly();
    }
    if (this.#tokens.valid('session', cookiesOf(request)[this.sessionCookie], binding(user, password))) {
      return { cookies: [], proven: true };
    }
    const ask = this.#options.loginForm ? notLoggedIn : loginRequired;
    const basic = basicCredentials(request.headers.authorization);
    if (!basic) return ask();
    const opened = await this.login(client, basic.user, basic.password, false);
    // Basic asks again, but a client past the limit is told to wait.
    if (opened instanceof Error) return opened.statusCode === 429 ? opened : ask();
    return opened;
  }

  /**
   * Checks a user and password (HTTP Basic, or 2.x's POST /rest/noauth/auth/password) and opens a
   * session: a cookie that lasts as long as the browser, or a week when asked to stay logged in.
   */
  async login(
    client: string,
    user: string,
    password: string,
    stay: boolean,
  ): Promise<GuiAdmitted | HttpError> {
    const { failures } = this.#options;
    const wait = failures.retryAfter(client);
    if (wait > 0) return tooManyFailures(wait);
    // A check costs ~0.1 s of CPU: a few at a time, each counted as a failure until it has passed, so
    // that guesses sent side by side meet the limit as guesses sent one by one do.
    if (this.#checking >= MAX_CHECKS_AT_ONCE) return tooManyFailures(1);
    failures.record(client);
    this.#checking += 1;
    const configured = this.#options.credentials();
    let matches: boolean;
    try {
      // The password is checked whatever the user: how long it takes says nothing of the user.
      matches = await passwordMatches(password, configured.password);
    } finally {
      this.#checking -= 1;
    }
    if (!matches || user !== configured.user || configured.user === '') return loginFailed();
    failures.pardon(client);
    const token = this.#tokens.make('session', binding(configured.user, configured.password));
    const age = stay ? `; Max-Age=${SESSION_LIFETIME_MS / 1000}` : '';
    return {
      cookies: [
        `${this.sessionCookie}=${token}; Path=/; HttpOnly; SameSite=Strict${age}${this.#secureFlag()}`,
      ],
      proven: true,
    };
  }

  /** The Set-Cookie that ends the session in this browser (2.x's logout). */
  logoutCookie(): string {
    return `${this.sessionCookie}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0${this.#secureFlag()}`;
  }

  #secureFlag(): string {
    return this.#options.secure ? '; Secure' : '';
  }
}

// A session is good for the user and password hash it was opened with only.
function binding(user: string, passwordHash: string): string {
  return `${user}\0${passwordHash}`;
}

/** The request's cookies by name (the first of a name wins, as browsers send the most specific first). */
export function cookiesOf(request: FastifyRequest): Record<string, string> {
  const header = request.headers.cookie;
  const cookies: Record<string, string> = Object.create(null);
  if (typeof header !== 'string') return cookies;
  for (const part of header.split(';')) {
    const at = part.indexOf('=');
    if (at <= 0) continue;
    const name = part.slice(0, at).trim();
    if (!(name in cookies)) cookies[name] = part.slice(at + 1).trim();
  }
  return cookies;
}

function basicCredentials(header: string | undefined): { user: string; password: string } | undefined {
  const match = /^Basic +([A-Za-z0-9+/=]+) *$/i.exec(header ?? '');
  if (!match) return undefined;
  const text = Buffer.from(match[1] as string, 'base64').toString('utf8');
  const at = text.indexOf(':');
  if (at === -1) return undefined;
  return { user: text.slice(0, at), password: text.slice(at + 1) };
}
