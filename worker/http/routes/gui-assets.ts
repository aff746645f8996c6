import { readdirSync, statSync } from 'node:fs';
import { join, normalize, sep } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyPluginOptions, FastifyReply, FastifyRequest } from 'fastify';
import QRCode from 'qrcode';
import type { GuiAuth } from '../gui-auth.ts';
import { invalidQuery, notFound } from '../http-errors.ts';

export interface GuiAssetOptions extends FastifyPluginOptions {
  /** The folder given with --gui-assets (STGUIASSETS). */
  root: string;
  deviceId: string;
  /** The theme and frame setting, as configured now (gui.theme, gui.insecureAllowFrameLoading). */
  gui: () => { theme: string; insecureAllowFrameLoading: boolean };
  auth: GuiAuth | undefined;
}

const DEFAULT_THEME = 'default';
const THEME_PREFIX = 'theme-assets/';
/** What a QR code is asked for: a device ID; a longer text is a mistake, and costs to draw. */
export const MAX_QR_TEXT = 1024;

/**
 * A web GUI's files served at /, as Syncthing's asset server serves them (lib/api/api_statics.go):
 * a folder laid out as Syncthing's `gui/` (a folder per theme, `default` among them) serves
 * `THEME/FILE` for the configured theme, else `default/FILE`, and `theme-assets/THEME/FILE` for any
 * theme; a folder without `default/` is served as it is. With them, what the asset server adds:
 * `/meta.js` (this device's ID), `/themes.json`, `/qr/?text=` (a PNG), the CSRF cookie on each page
 * (see gui-auth.ts) and its security headers.
 */
export async function guiAssetRoutes(app: FastifyInstance, options: GuiAssetOptions): Promise<void> {
  const { root, deviceId } = options;
  const themed = isDirectory(join(root, DEFAULT_THEME));
  await app.register(fastifyStatic, {
    root,
    serve: false,
    // A folder's hidden files (.git, .env) are no part of a GUI.
    dotfiles: 'deny',
    cacheControl: false,
    etag: true,
    lastModified: true,
  });

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

  app.get('/themes.json', async () => ({
    themes: themed ? themesIn(root) : [DEFAULT_THEME],
  }));

  app.get('/qr/', async (request, reply) => {
    const text = (request.query as { text?: unknown }).text;
    if (typeof text !== 'string' || text === '') throw invalidQuery('give ?text=…, the text to draw');
    if (text.length > MAX_QR_TEXT) throw invalidQuery(`text must be at most ${MAX_QR_TEXT} characters`);
    // Syncthing's: error correction M, 8 pixels a module, a border of 4.
    const png = await QRCode.toBuffer(text, { errorCorrectionLevel: 'M', scale: 8, margin: 4, type: 'png' });
    reply.type('image/png');
    return png;
  });

  const serve = async (request: FastifyRequest, reply: FastifyReply) => {
    const path = decodedPath(request);
    // /rest is the API's: an unknown endpoint there is a 404 of the API, never a page.
    if (path === undefined || path === '/rest' || path.startsWith('/rest/')) {
      throw notFound(request.method, request.url.split('?', 1)[0] as string);
    }
    let file = path.slice(1) || 'index.html';
    if (!themed) return sendOrNotFound(reply, request, file, root);
    let theme = options.gui().theme || DEFAULT_THEME;
    if (file.startsWith(THEME_PREFIX)) {
      const rest = file.slice(THEME_PREFIX.length);
      const at = rest.indexOf('/');
      if (at <= 0) throw notFound(request.method, path);
      theme = rest.slice(0, at);
      file = rest.slice(at + 1);
    }
    for (const dir of [theme, DEFAULT_THEME]) {
      if (isThemeName(dir) && isFile(join(root, dir, file))) return reply.sendFile(file, join(root, dir));
    }
    throw notFound(request.method, path);
  };
  app.get('/', serve);
  app.get('/*', serve);
}

/** The path asked for, decoded, with no way out of the folder (no dot segments, no NUL); undefined if bad. */
function decodedPath(request: FastifyRequest): string | undefined {
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

function sendOrNotFound(reply: FastifyReply, request: FastifyRequest, file: string, root: string) {
  if (!isFile(join(root, file))) throw notFound(request.method, `/${file}`);
  return reply.sendFile(file, root);
}

function isThemeName(name: string): boolean {
  return /^[A-Za-z0-9._-]+$/.test(name) && name !== '.' && name !== '..';
}

function themesIn(root: string): string[] {
  return readdirSync(root, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && isThemeName(entry.name))
    .map((entry) => entry.name)
    .sort();
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
