// The REST interface as the page calls it: with the API key, while no GUI password is set; else with
// the CSRF token its page was given (a cookie) sent back in a header, as Syncthing's GUI does, and the
// session cookie a login opened (see docs/web-gui.md). Every failure is an ApiError with the
// service's own message.
import { signal } from '@preact/signals';

/** An answer that is not 2xx, or no answer at all (status 0). */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
  }
}

/** Set when the service asks for a login: the page shows its login form. */
export const loginNeeded = signal(false);
/** Why, in the service's words, and whether it is the API key it wants (no GUI password is set). */
export const loginReason = signal<{ message: string; key: boolean }>({ message: '', key: false });

// The API key this page logs in with, while no GUI password is set: this tab's (sessionStorage), or
// this browser's when asked to remember it (localStorage).
const KEY_ITEM = 'syncd-api-key';
export function storedKey(): string {
  return sessionStorage.getItem(KEY_ITEM) ?? localStorage.getItem(KEY_ITEM) ?? '';
}
export function storeKey(key: string, remember: boolean): void {
  forgetKey();
  (remember ? localStorage : sessionStorage).setItem(KEY_ITEM, key);
}
export function forgetKey(): void {
  sessionStorage.removeItem(KEY_ITEM);
  localStorage.removeItem(KEY_ITEM);
}
/** Set while the service does not answer at all: the page says so, and tries again. */
export const unreachable = signal(false);

type Query = Record<string, string | number | boolean | undefined>;

const LOGIN_CODES = new Set([
  'SYNCD_ERR_NOT_LOGGED_IN',
  'SYNCD_ERR_LOGIN_REQUIRED',
  'SYNCD_ERR_API_KEY_NEEDED',
]);

/**
 * This device's CSRF cookie's name ends in the first five characters of its ID, which every answer
 * carries (X-Syncthing-Id): cookies do not tell ports apart, and another syncd on this host sets its
 * own token in the same browser.
 */
let shortId: Promise<string> | undefined;
function deviceShortId(): Promise<string> {
  shortId ??= fetch('/rest/noauth/health', { credentials: 'same-origin' }).then(
    (response) => response.headers.get('x-syncthing-id')?.slice(0, 5) ?? '',
    (error: unknown) => {
      shortId = undefined;
      throw error;
    },
  );
  return shortId;
}

async function csrfHeader(): Promise<Record<string, string>> {
  const name = `CSRF-Token-${await deviceShortId()}`;
  for (const part of document.cookie.split(';')) {
    const [key, value] = part.trim().split('=', 2);
    if (key === name && value) return { [`X-${name}`]: value };
  }
  return {};
}

export function url(path: string, query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined) params.set(key, String(value));
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

/** Calls the service; resolves to the parsed JSON answer (undefined for an empty one). */
interface CallOptions {
  query?: Query;
  body?: unknown;
  signal?: AbortSignal;
  text?: boolean;
  blob?: boolean;
}

export async function call<T>(method: string, path: string, options: CallOptions = {}): Promise<T> {
  try {
    return await callOnce<T>(method, path, options);
  } catch (error) {
    // A CSRF token expired (they last 30 days) while the page stayed open: a page's load gives a new
    // one, and the call is made again, once, rather than refused until the client is locked out.
    if (!(error instanceof ApiError) || error.code !== 'SYNCD_ERR_UNAUTHORIZED' || storedKey()) throw error;
    await fetch('/', { credentials: 'same-origin' }).catch(() => undefined);
    return callOnce<T>(method, path, options);
  }
}

async function callOnce<T>(method: string, path: string, options: CallOptions): Promise<T> {
  let response: Response;
  try {
    const key = storedKey();
    response = await fetch(url(path, options.query), {
      method,
      headers: {
        ...(key ? { 'X-API-Key': key } : await csrfHeader()),
        ...(options.body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      credentials: 'same-origin',
      signal: options.signal,
    });
  } catch (error) {
    if (options.signal?.aborted) throw error;
    unreachable.value = true;
    throw new ApiError(0, 'UNREACHABLE', 'syncd does not answer');
  }
  unreachable.value = false;
  if (options.blob && response.ok) return (await response.blob()) as T;
  const text = await response.text();
  if (!response.ok) {
    let code = `HTTP_${response.status}`;
    let message = text.trim() || response.statusText;
    try {
      const body = JSON.parse(text) as { code?: string; message?: string; error?: string };
      code = body.code ?? code;
      message = body.message ?? body.error ?? message;
    } catch {
      // Not JSON: the text as it came.
    }
    if (LOGIN_CODES.has(code) || (code === 'SYNCD_ERR_UNAUTHORIZED' && storedKey())) {
      // A key that no longer acts (changed since) is forgotten, and asked for again.
      if (code === 'SYNCD_ERR_UNAUTHORIZED') forgetKey();
      loginReason.value = { message, key: code !== 'SYNCD_ERR_NOT_LOGGED_IN' };
      loginNeeded.value = true;
    }
    throw new ApiError(response.status, code, message);
  }
  if (options.text) return text as T;
  return (text === '' ? undefined : JSON.parse(text)) as T;
}

export const get = <T>(path: string, query?: Query, signal?: AbortSignal) =>
  call<T>('GET', path, { query, signal });
export const post = <T = unknown>(path: string, body?: unknown, query?: Query) =>
  call<T>('POST', path, { body, query });
export const put = <T = unknown>(path: string, body: unknown) => call<T>('PUT', path, { body });
export const patch = <T = unknown>(path: string, body: unknown) => call<T>('PATCH', path, { body });
export const del = <T = unknown>(path: string, query?: Query) => call<T>('DELETE', path, { query });

/** What to show for a failure: the service's message. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
