import { STATUS_CODES } from 'node:http';
import { ConfigProblem } from '../../shared/config/shape.ts';
import { ChangeFailed } from '../config/worker-config.ts';
import { ModelError, type ModelErrorKind } from '../service/model.ts';
import { MAX_HEADER_BYTES, MAX_HEADER_COUNT } from './limits.ts';

/**
 * Every error response the service sends has this one JSON shape: `code` is stable and meant for
 * programs, `message` names the problem for people.
 */
export interface ErrorBody {
  statusCode: number;
  error: string;
  code: ErrorCode;
  message: string;
}

/** An error a route throws to answer with its status; `headers` go on the response. */
export class HttpError extends Error {
  readonly statusCode: number;
  readonly code: ErrorCode;
  readonly headers: Record<string, string>;
  constructor(code: ErrorCode, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.name = 'HttpError';
    this.code = code;
    this.statusCode = statuses[code];
    this.headers = headers;
  }
}

// The catalog: every code the service answers with, and its status. Grouped by what refuses.
const statuses = {
  // The request itself, before any route.
  SYNCD_ERR_MALFORMED_REQUEST: 400,
  SYNCD_ERR_REQUEST_TIMEOUT: 408,
  SYNCD_ERR_BODY_TOO_LARGE: 413,
  SYNCD_ERR_UNSUPPORTED_MEDIA_TYPE: 415,
  SYNCD_ERR_HEADERS_TOO_LARGE: 431,
  // Who may ask.
  SYNCD_ERR_UNAUTHORIZED: 401,
  SYNCD_ERR_HOST_NOT_ALLOWED: 403,
  SYNCD_ERR_TOO_MANY_FAILURES: 429,
  SYNCD_ERR_LOGIN_REQUIRED: 401,
  SYNCD_ERR_NOT_LOGGED_IN: 403,
  SYNCD_ERR_API_KEY_NEEDED: 403,
  SYNCD_ERR_LOGIN_FAILED: 403,
  SYNCD_ERR_GUI_LOCAL_ONLY: 403,
  SYNCD_ERR_DEBUGGING_DISABLED: 403,
  // What is asked.
  SYNCD_ERR_NOT_FOUND: 404,
  SYNCD_ERR_METHOD_NOT_ALLOWED: 405,
  SYNCD_ERR_BAD_REQUEST: 400,
  SYNCD_ERR_EMPTY_ERROR_TEXT: 400,
  SYNCD_ERR_NOT_IMPLEMENTED: 501,
  SYNCD_ERR_GUI_NOT_BUILT: 503,
  SYNCD_ERR_INVALID_CONFIG: 400,
  SYNCD_ERR_INVALID_DEVICE_ID: 400,
  SYNCD_ERR_INVALID_QUERY: 400,
  SYNCD_ERR_CONFIG_CONFLICT: 409,
  SYNCD_ERR_CONFIG_NOT_SAVED: 500,
  SYNCD_ERR_FOLDER_PAUSED: 409,
  SYNCD_ERR_FOLDER_TYPE: 409,
  SYNCD_ERR_INVALID_IGNORES: 400,
  SYNCD_ERR_FOLDER_ERROR: 409,
  SYNCD_ERR_NO_VERSIONING: 409,
  SYNCD_ERR_SERVICE_UNAVAILABLE: 503,
  SYNCD_ERR_UPGRADE_UNSUPPORTED: 500,
  // Ours.
  SYNCD_ERR_INTERNAL: 500,
} as const;

export type ErrorCode = keyof typeof statuses;

export function errorBody(code: ErrorCode, message: string): ErrorBody {
  const statusCode = statuses[code];
  return { statusCode, error: STATUS_CODES[statusCode] ?? 'Error', code, message };
}

/** The code of an error Fastify itself raised (a body too large, a malformed JSON body), by its status. */
export function codeOf(statusCode: number): ErrorCode {
  if (statusCode === 413) return 'SYNCD_ERR_BODY_TOO_LARGE';
  if (statusCode === 415) return 'SYNCD_ERR_UNSUPPORTED_MEDIA_TYPE';
  if (statusCode === 408) return 'SYNCD_ERR_REQUEST_TIMEOUT';
  if (statusCode === 431) return 'SYNCD_ERR_HEADERS_TOO_LARGE';
  if (statusCode === 404) return 'SYNCD_ERR_NOT_FOUND';
  return statusCode < 500 ? 'SYNCD_ERR_BAD_REQUEST' : 'SYNCD_ERR_INTERNAL';
}

export const unauthorized = () =>
  new HttpError(
    'SYNCD_ERR_UNAUTHORIZED',
    'missing or wrong API key: send it as X-API-Key: KEY or Authorization: Bearer KEY',
    { 'www-authenticate': 'Bearer' },
  );

/** Syncthing 1.19's answer, whose header makes a browser ask for the user and password. */
export const loginRequired = () =>
  new HttpError(
    'SYNCD_ERR_LOGIN_REQUIRED',
    'log in with the GUI user and password (gui.user, gui.password), or send the API key',
    { 'www-authenticate': 'Basic realm="Authorization Required"' },
  );

export const notLoggedIn = () =>
  new HttpError(
    'SYNCD_ERR_NOT_LOGGED_IN',
    'log in on the web GUI with its user and password (gui.user, gui.password), or send the API key',
  );

export const apiKeyNeeded = () =>
  new HttpError(
    'SYNCD_ERR_API_KEY_NEEDED',
    'no GUI password is set: log in with the API key (gui.apiKey; npm start at a terminal prints a link that does), or set a GUI password (gui.user, gui.password)',
  );

export const loginFailed = () =>
  new HttpError(
    'SYNCD_ERR_LOGIN_FAILED',
    'wrong user or password: the GUI user and password are gui.user and gui.password',
  );

export const guiLocalOnly = () =>
  new HttpError(
    'SYNCD_ERR_GUI_LOCAL_ONLY',
    'the web GUI answers this machine only while no GUI password is set: set gui.user and gui.password (PATCH /rest/config/gui) to use it from elsewhere, or send the API key',
  );

export const notFound = (method: string, path: string) =>
  new HttpError('SYNCD_ERR_NOT_FOUND', `no such endpoint: ${method} ${path}`);

export const methodNotAllowed = (method: string, path: string, allowed: readonly string[]) =>
  new HttpError(
    'SYNCD_ERR_METHOD_NOT_ALLOWED',
    `${path} does not accept ${method}; it accepts ${allowed.join(', ')}`,
    {
      allow: allowed.join(', '),
    },
  );

export const notImplemented = (method: string, path: string) =>
  new HttpError('SYNCD_ERR_NOT_IMPLEMENTED', `${method} ${path} is not implemented yet in syncd`);

/** Syncthing's packaged builds (Debian's, built without upgrades) answer upgrades so: 500, these words. */
export const upgradeUnsupported = () =>
  new HttpError(
    'SYNCD_ERR_UPGRADE_UNSUPPORTED',
    'upgrade unsupported: syncd is upgraded by installing a new version of its package or image',
  );

export const emptyErrorText = () =>
  new HttpError(
    'SYNCD_ERR_EMPTY_ERROR_TEXT',
    'the error text is empty: send it as the request body, for example curl -d "disk full"',
  );

export const hostNotAllowed = (host: string) =>
  new HttpError(
    'SYNCD_ERR_HOST_NOT_ALLOWED',
    `Host "${host}" is not allowed: this service answers loopback names only (add others with --allowed-hosts)`,
  );

export const tooManyFailures = (retryAfterSeconds: number) =>
  new HttpError(
    'SYNCD_ERR_TOO_MANY_FAILURES',
    `too many requests with a missing or wrong API key; try again in ${retryAfterSeconds} s`,
    { 'retry-after': String(retryAfterSeconds) },
  );

export const headersTooLarge = (lines: number) =>
  new HttpError(
    'SYNCD_ERR_HEADERS_TOO_LARGE',
    `the request's headers are too large: at most ${MAX_HEADER_COUNT} lines and ${MAX_HEADER_BYTES / 1024} KiB in all (it sent ${lines} lines)`,
  );

export const invalidConfig = (message: string) => new HttpError('SYNCD_ERR_INVALID_CONFIG', message);

export const invalidDeviceId = (text: string, problem: string) =>
  new HttpError('SYNCD_ERR_INVALID_DEVICE_ID', `"${text}" is not a device ID: ${problem}`);

export const invalidQuery = (message: string) => new HttpError('SYNCD_ERR_INVALID_QUERY', message);

export const invalidBody = (message: string) => new HttpError('SYNCD_ERR_BAD_REQUEST', message);

export const noSuch = (what: string) => new HttpError('SYNCD_ERR_NOT_FOUND', what);

/** What the model refuses, as the REST face answers it. */
const MODEL_ERROR_CODES = {
  'folder-paused': 'SYNCD_ERR_FOLDER_PAUSED',
  'folder-not-running': 'SYNCD_ERR_FOLDER_ERROR',
  'folder-type': 'SYNCD_ERR_FOLDER_TYPE',
  'no-versioning': 'SYNCD_ERR_NO_VERSIONING',
  'invalid-ignores': 'SYNCD_ERR_INVALID_IGNORES',
} as const satisfies Record<ModelErrorKind, ErrorCode>;

/**
 * The error a route let through, as the answer says it: a configuration that cannot be used (400), a
 * save that failed (409 or 500), ignore patterns that cannot be used (400). The app's error handler
 * asks this of every error, so routes let these through instead of catching them.
 */
export function asHttpError(error: unknown): unknown {
  if (error instanceof ConfigProblem) return invalidConfig(error.message);
  if (error instanceof ModelError) return new HttpError(MODEL_ERROR_CODES[error.kind], error.message);
  if (error instanceof ChangeFailed) {
    const code =
      error.status === 400
        ? 'SYNCD_ERR_INVALID_CONFIG'
        : error.status === 409
          ? 'SYNCD_ERR_CONFIG_CONFLICT'
          : 'SYNCD_ERR_CONFIG_NOT_SAVED';
    return new HttpError(code, error.message);
  }
  return error;
}
