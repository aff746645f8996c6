import { Writable } from 'node:stream';
import { createLogger } from '../../shared/logger.ts';
import type { App, AppOptions } from '../../worker/http/app.ts';
import { localErrors } from '../../worker/http/routes/system.ts';
import './teardown-first.ts';

export const testApiKey = 'an-api-key-for-tests-0123456789';

/** A logger that writes nowhere. */
export function silentLogger() {
  return createLogger(
    'worker',
    'silent',
    undefined,
    new Writable({ write: (_chunk, _encoding, done) => done() }),
  );
}

/** A logger whose warnings (and worse) are kept in `warnings`, as the recent errors would get them. */
export function recordingLogger() {
  const warnings: string[] = [];
  const logger = createLogger(
    'worker',
    'silent',
    (error) => warnings.push(error.message),
    new Writable({ write: (_chunk, _encoding, done) => done() }),
  );
  return { logger, warnings };
}

/** What buildApp needs, with nothing behind it: no supervisor, no real status; `overrides` win. */
export function appOptions(overrides: Partial<AppOptions> = {}): AppOptions {
  return {
    apiKey: testApiKey,
    logger: silentLogger(),
    errors: localErrors(),
    status: {
      startTime: new Date(),
      address: '127.0.0.1:8384',
      supervisor: () => ({ pid: 0, startTime: '', restarts: 0, crashes: 0 }),
    },
    onAction: () => {},
    isDraining: () => false,
    ...overrides,
  };
}

/** Requests to an app through inject(), with the test key; a body other than a string is sent as JSON. */
export function injector(app: App) {
  return async (method: string, url: string, body?: unknown) => {
    const response = await app.inject({
      method: method as 'GET',
      url,
      payload: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      headers: { 'x-api-key': testApiKey, 'content-type': 'application/json' },
    });
    return {
      status: response.statusCode,
      text: response.body,
      // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read whatever JSON came back.
      json: (): any => (response.body === '' ? undefined : JSON.parse(response.body)),
    };
  };
}
