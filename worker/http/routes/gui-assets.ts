import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { notFound } from '../http-errors.ts';
import { addGuiPages, decodedPath, type GuiPageOptions } from './gui-pages.ts';

export interface GuiAssetOptions extends GuiPageOptions {
  /** The folder given with --gui-assets (STGUIASSETS). */
  root: string;
}

const DEFAULT_THEME = 'default';
const THEME_PREFIX = 'theme-assets/';

/**
 * A web GUI's files served at /, as Syncthing's asset server serves them (lib/api/api_statics.go):
 * a folder laid out as Syncthing's `gui/` (a folder per theme, `default` among them) serves
 * `THEME/FILE` for the configured theme, else `default/FILE`, and `theme-assets/THEME/FILE` for any
 * theme; a folder without `default/` is served as it is. With them, `/themes.json` and what every
 * GUI gets (gui-pages.ts).
 */
export async function guiAssetRoutes(app: FastifyInstance, options: GuiAssetOptions): Promise<void> {
  const { root } = options;
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

  addGuiPages(app, options);

  app.get('/themes.json', async () => ({
    themes: themed ? themesIn(root) : [DEFAULT_THEME],
  }));

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
