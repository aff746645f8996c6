import { normalize, sep } from 'node:path';
import type { FastifyInstance, FastifyPluginOptions, FastifyRequest } from 'fastify';
import type { GuiAuth } from '../gui-auth.ts';
import { invalidQuery } from '../http-errors.ts';

export interface GuiPageOptions extends FastifyPluginOptions {
  deviceId: string;
  /** The theme and frame setting, as configured now (gui.theme, gui.insecureAllowFrameLoading). */
  gui: () => { theme: string; insecureAllowFrameLoading: boolean };
  auth: GuiAuth | undefined;
}

/** What a QR code is asked for: a device ID; a longer text is a mistake, and costs to draw. */
export const MAX_QR_TEXT = 1024;

/**
 * What Syncthing's asset server adds to any GUI's files (lib/api/api_statics.go, api.go): the security
 * headers and the CSRF cookie on each page (see gui-auth.ts), `/meta.js` (this device's ID) and
 * `/qr/?text=` (a PNG). Added to the scope that serves the files, so that the hook is theirs.
 */
export function addGuiPages(app: FastifyInstance, options: GuiPageOptions): void {
  const { deviceId } = options;
  app.addHook('onSend', (request, reply, payload, done) => {
    if (!options.gui().insecureAllowFrameLoading) reply.header('x-frame-options', 'SAMEORIGIN');
    reply.header('x-content-type-options', 'nosniff');
    // With pages only: a client refused (401, 403) gets no token.
    const cookie = reply.statusCode < 400 ? options.auth?.csrfCookieFor(request) : undefined;
    // Added to the session cookie a login may have set (reply.header appends Set-Cookie).
    if (cookie) reply.header('set-cookie', cookie);
    done(null, payload);
  });

  app.get('/meta.js', async (_request, reply) => {
    reply.type('application/javascript');
    const meta = { deviceID: deviceId, deviceIDShort: deviceId.slice(0, 5), authenticated: true };
    return `var metadata = ${JSON.stringify(meta)};\n`;
  });

  app.get('/qr/', async (request, reply) => {
    const text = (request.query as { text?: unknown }).text;
    if (typeof text !== 'string' || text === '') throw invalidQuery('give ?text=…, the text to draw');
    if (text.length > MAX_QR_TEXT) throw invalidQuery(`text must be at most ${MAX_QR_TEXT} characters`);
    // Loaded when first drawn: the QR code writer costs every start else.
    const { default: QRCode } = await import('qrcode');
    // Syncthing's: error correction M, 8 pixels a module, a border of 4.
    const png = await QRCode.toBuffer(text, { errorCorrectionLevel: 'M', scale: 8, margin: 4, type: 'png' });
    reply.type('image/png');
    return png;
  });
}

/** The path asked for, decoded, with no way out of the folder (no dot segments, no NUL); undefined if bad. */
export function decodedPath(request: FastifyRequest): string | undefined {
  let path: string;
  try {
    path = decodeURIComponent(request.url.split('?', 1)[0] as string);
  } catch {
    return undefined;
  }
  if (path.includes('\0') || path.includes('\\')) return undefined;
  // Hidden files (.git, .env) are no part of a GUI, and no theme's name starts with a dot.
  if (path.split('/').some((segment) => segment.startsWith('.'))) return undefined;
  const clean = normalize(path);
  if (clean !== path || clean.split(sep).includes('..')) return undefined;
  return path;
}
