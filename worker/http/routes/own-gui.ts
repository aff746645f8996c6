import { readdir, readFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { extname, join } from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HttpError, notFound } from '../http-errors.ts';
import { addGuiPages, decodedPath, type GuiPageOptions } from './gui-pages.ts';

export interface OwnGuiOptions extends GuiPageOptions {
  /** The built GUI (dist/gui): index.html, its script and style, their source maps. */
  root: string;
}

interface GuiFile {
  body: Buffer;
  type: string;
  etag: string;
}

const CONTENT_SECURITY_POLICY =
  "default-src 'self'; img-src 'self' data: blob:; object-src 'none'; base-uri 'none'; form-action 'self'";

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'application/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

/**
 * syncd's own web GUI (gui/, built into dist/gui by scripts/build.ts) at /. Its few files are read
 * once, when first asked for, and kept: the worker's start reads nothing of them.
 */
export async function ownGuiRoutes(app: FastifyInstance, options: OwnGuiOptions): Promise<void> {
  addGuiPages(app, options);
  let files: Promise<Map<string, GuiFile>> | undefined;
  const serve = async (request: FastifyRequest, reply: FastifyReply) => {
    const path = decodedPath(request);
    // /rest is the API's: an unknown endpoint there is a 404 of the API, never a page.
    if (path === undefined || path === '/rest' || path.startsWith('/rest/')) {
      throw notFound(request.method, request.url.split('?', 1)[0] as string);
    }
    files ??= readGui(options.root);
    const all = await files.catch((error: Error) => {
      files = undefined;
      throw error;
    });
    const file = all.get(path.slice(1) || 'index.html');
    if (!file) throw notFound(request.method, path);
    // Asked again at each load (the worker keeps them while it runs), sent again only when changed.
    reply.header('cache-control', 'no-cache').header('etag', file.etag);
    // The page runs its own script only, and reaches this service only.
    reply.header('content-security-policy', CONTENT_SECURITY_POLICY);
    if (request.headers['if-none-match'] === file.etag) return reply.code(304).send();
    return reply.type(file.type).send(file.body);
  };
  app.get('/', serve);
  app.get('/*', serve);
}

async function readGui(root: string): Promise<Map<string, GuiFile>> {
  const names = await readdir(root).catch(() => [] as string[]);
  if (!names.includes('index.html')) {
    throw new HttpError(
      'SYNCD_ERR_GUI_NOT_BUILT',
      "syncd's web GUI is not built (dist/gui has no index.html): run npm run build, or serve another with --gui-assets",
    );
  }
  const files = new Map<string, GuiFile>();
  for (const name of names) {
    const type = TYPES[extname(name)];
    if (!type) continue;
    const body = await readFile(join(root, name));
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
    files.set(name, { body, type, etag });
  }
  return files;
}
