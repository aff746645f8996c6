import { STATUS_CODES } from 'node:http';

// Every error response the service sends has this one JSON shape.
export interface ErrorBody {
  statusCode: number;
  error: string;
  message: string;
}

export function errorBody(statusCode: number, message: string): ErrorBody {
  return { statusCode, error: STATUS_CODES[statusCode] ?? 'Error', message };
}

/** An error a route throws to answer with its status; `headers` go on the response. */
export class HttpError extends Error {
  readonly statusCode: number;
  readonly headers: Record<string, string>;
  constructor(statusCode: number, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.name = 'HttpError';
    this.statusCode = statusCode;
    this.headers = headers;
  }
}

export const unauthorized = () =>
  new HttpError(401, 'missing or wrong API key: send it as X-API-Key: KEY or Authorization: Bearer KEY', {
    'www-authenticate': 'Bearer',
  });

export const notFound = (method: string, path: string) =>
  new HttpError(404, `no such endpoint: ${method} ${path}`);

export const methodNotAllowed = (method: string, path: string, allowed: readonly string[]) =>
  new HttpError(405, `${path} does not accept ${method}; it accepts ${allowed.join(', ')}`, {
    allow: allowed.join(', '),
  });

export const notImplemented = (method: string, path: string) =>
  new HttpError(501, `${method} ${path} is not implemented yet in syncd`);

export const emptyErrorText = () =>
  new HttpError(400, 'the error text is empty: send it as the request body, for example curl -d "disk full"');

export const hostNotAllowed = (host: string) =>
  new HttpError(
    403,
    `Host "${host}" is not allowed: this service answers loopback names only (add others with --allowed-hosts)`,
  );

export const tooManyFailures = (retryAfterSeconds: number) =>
  new HttpError(
    429,
    `too many requests with a missing or wrong API key; try again in ${retryAfterSeconds} s`,
    {
      'retry-after': String(retryAfterSeconds),
    },
  );

export const headersTooLarge = (lines: number) =>
  new HttpError(
    431,
    `the request's headers are too large: at most ${MAX_HEADER_LINES} lines and ${MAX_HEADER_KIB} KiB in all (it sent ${lines} lines)`,
  );

const MAX_HEADER_LINES = 100;
const MAX_HEADER_KIB = 16;
