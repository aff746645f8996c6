// Syncthing's web GUI, for tests that serve it from syncd. The project ships none of Syncthing's files:
// a test copies them when it runs from a real Syncthing 1.19 (Debian's `syncthing`, whose GUI assets are
// compiled in), crawling its GUI from index.html. Plain asset GETs need neither API key nor CSRF cookie
// (only /rest does), and the Syncthing reaches out to nothing (startSyncthing's loopback home).
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, relative, resolve, sep } from 'node:path';
import { startSyncthing } from './syncthing.ts';

export interface CopiedGui {
  /** The files written, relative to the target with `/` separators, sorted. */
  files: string[];
  ms: number;
}

/** Everything in one GUI crawl is bounded by this (it catches hangs, not slowness). */
const CRAWL_MS = 60_000;
/** Paths the server answers itself rather than from its assets. */
const NOT_ASSETS = [/^\/rest\//, /^\/meta\.js$/, /^\/qr\//];
const ASSET_EXTENSIONS = 'html|json|js|css|png|svg|ico|gif|jpe?g|woff2?|ttf|eot';
/** A quoted relative path to an asset in HTML or JavaScript: `"assets/x.css"`, `'syncthing/y.html'`. */
const QUOTED_PATH = new RegExp(
  `(["'])(\\/?(?:\\.{1,2}/)*[\\w@~-][\\w@~.+-]*(?:/[\\w@~.+-]+)*\\.(?:${ASSET_EXTENSIONS}))(?:[?#][^"'\\s]*)?\\1`,
  'g',
);
/** A quoted path with an Angular expression in it: `"assets/img/favicon-{{syncthingStatus()}}.png"`. */
const TEMPLATED_PATH = new RegExp(
  `(["'])([\\w@~./-]*\\{\\{[^"'{}]+\\}\\}[\\w@~./-]*\\.(?:${ASSET_EXTENSIONS}))\\1`,
  'g',
);
const CSS_URL = /url\(\s*(["']?)([^"')]+)\1\s*\)/g;
/** angular-translate's static files loader (`prefix: 'assets/lang/lang-', suffix: '.json'`). */
const LOADER = /prefix:\s*(["'])([^"']+)\1\s*,\s*suffix:\s*(["'])([^"']+)\3/g;
/** assets/lang/valid-langs.js: `var validLangs = ["bg", ...]`. */
const VALID_LANGS = /validLangs\s*=\s*(\[[^\]]*\])/;
const CONCURRENCY = 16;

/**
 * Copies the GUI of a fresh Syncthing into `target` (see fileFor for where each file goes);
 * the Syncthing is stopped and its home removed whatever happens.
 */
export async function copySyncthingGui(
  target: string,
  options: { signal?: AbortSignal } = {},
): Promise<CopiedGui> {
  const started = performance.now();
  const signal = AbortSignal.any([
    AbortSignal.timeout(CRAWL_MS),
    ...(options.signal ? [options.signal] : []),
  ]);
  const teardowns: (() => unknown)[] = [];
  try {
    // Its start is bounded by startSyncthing's own wait for pings; the signal counts from there on.
    const syncthing = await startSyncthing({ teardown: (fn) => teardowns.push(fn) }, 'syncthing (GUI)');
    signal.throwIfAborted();
    const files = await crawl(syncthing.url, resolve(target), signal);
    return { files, ms: Math.round(performance.now() - started) };
  } finally {
    await runAll(teardowns);
  }
}

/** Runs every teardown, in order, even past a failing one; then throws the first failure. */
async function runAll(teardowns: (() => unknown)[]): Promise<void> {
  const failures: unknown[] = [];
  for (const teardown of teardowns) {
    try {
      await teardown();
    } catch (error) {
      failures.push(error);
    }
  }
  if (failures.length > 0) throw failures[0];
}

/** What the crawl learnt so far that no single file says: languages, loaders, scripts, templated paths. */
interface Clues {
  langs: Set<string>;
  loaders: Set<string>;
  scripts: string[];
  templated: Set<string>;
}

/** Fetches `/`, then whatever the files fetched refer to, until nothing new; returns the files written. */
async function crawl(base: string, root: string, signal: AbortSignal): Promise<string[]> {
  const clues: Clues = { langs: new Set(), loaders: new Set(), scripts: [], templated: new Set() };
  const seen = new Set<string>(['/']);
  const written: string[] = [];
  let queue = ['/'];
  while (queue.length > 0) {
    const next: string[] = [];
    for (let i = 0; i < queue.length; i += CONCURRENCY) {
      const batch = queue.slice(i, i + CONCURRENCY);
      const results = await Promise.all(batch.map((path) => copyOne(base, path, root, clues, signal)));
      for (const result of results) {
        if (!result) continue;
        written.push(result.file);
        next.push(...result.refs);
      }
    }
    queue = [...new Set([...next, ...derivedPaths(clues)])].filter((path) => !seen.has(path));
    for (const path of queue) seen.add(path);
  }
  return written.sort();
}

/** Fetches one path; writes it when it answers 200 and returns the paths it refers to (null otherwise). */
async function copyOne(
  base: string,
  path: string,
  root: string,
  clues: Clues,
  signal: AbortSignal,
): Promise<{ file: string; refs: string[] } | null> {
  const response = await fetch(new URL(path, base), { signal, redirect: 'manual' });
  const body = Buffer.from(await response.arrayBuffer());
  if (response.status !== 200) return null;
  const file = fileFor(root, path);
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, body);
  return {
    file: relative(root, file).split(sep).join('/'),
    refs: references(path, body.toString('utf8'), clues),
  };
}

/**
 * Where `path` goes under `root`, laid out as Syncthing's gui/ folder (a folder per theme, what
 * STGUIASSETS serves): `theme-assets/THEME/FILE` in THEME/, the rest in default/. Throws for a path
 * that would leave it.
 */
function fileFor(root: string, path: string): string {
  const decoded = decodeURIComponent(path === '/' ? '/index.html' : path);
  const themed = /^\/theme-assets\/([^/]+)(\/.*)$/.exec(decoded);
  const file = resolve(root, themed ? `./${themed[1]}${themed[2]}` : `./default${decoded}`);
  if (!file.startsWith(root + sep)) throw new Error(`GUI path ${path} leaves ${root}`);
  return file;
}

/** The asset paths a file refers to, normalised; notes what it says about languages, themes and templates. */
function references(path: string, text: string, clues: Clues): string[] {
  const type = path === '/' ? 'html' : (path.split('.').pop() ?? '');
  if (type === 'css') return [...text.matchAll(CSS_URL)].flatMap((match) => assetPath(match[2] ?? '', path));
  if (type === 'json') return themePaths(text);
  if (type !== 'html' && type !== 'js') return [];
  if (type === 'js') noteScript(text, clues);
  for (const match of text.matchAll(TEMPLATED_PATH)) clues.templated.add(match[2] ?? '');
  // Paths in scripts and templates are relative to the page (index.html at /), not to the file.
  return [...text.matchAll(QUOTED_PATH)].flatMap((match) => assetPath(match[2] ?? '', '/'));
}

/** A reference resolved against the file it is in: its normalised path, or none when it is not an asset. */
function assetPath(ref: string, from: string): string[] {
  if (ref.startsWith('data:') || ref.startsWith('//') || /^[a-z][\w+.-]*:/i.test(ref)) return [];
  const url = new URL(ref, new URL(from, 'http://gui/'));
  if (url.host !== 'gui') return [];
  // index.html is `/`, fetched first; other folders are no assets.
  if (url.pathname === '/index.html' || url.pathname.endsWith('/')) return [];
  return NOT_ASSETS.some((pattern) => pattern.test(url.pathname)) ? [] : [url.pathname];
}

/** themes.json (`{"themes": ["default", "dark", ...]}`) names each theme's stylesheet. */
function themePaths(text: string): string[] {
  const themes = (parsed(text) as { themes?: unknown } | undefined)?.themes;
  if (!Array.isArray(themes)) return [];
  return themes
    .filter((theme): theme is string => typeof theme === 'string')
    .flatMap((theme) => assetPath(`theme-assets/${theme}/assets/css/theme.css`, '/'));
}

function noteScript(text: string, clues: Clues): void {
  clues.scripts.push(text);
  for (const match of text.matchAll(LOADER)) clues.loaders.add(`${match[2]}\n${match[4]}`);
  const langs = parsed(VALID_LANGS.exec(text)?.[1] ?? '');
  if (Array.isArray(langs)) for (const lang of langs) if (typeof lang === 'string') clues.langs.add(lang);
}

/** Paths no file names whole: each language's file, and templated paths with each value they can take. */
function derivedPaths(clues: Clues): string[] {
  const langFiles = [...clues.loaders].flatMap((loader) => {
    const [prefix = '', suffix = ''] = loader.split('\n');
    return [...clues.langs].flatMap((lang) => assetPath(`${prefix}${lang}${suffix}`, '/'));
  });
  const expanded = [...clues.templated].flatMap((template) =>
    template.includes('{{') ? expandTemplate(template, clues.scripts) : [],
  );
  return [...langFiles, ...expanded];
}

/**
 * `favicon-{{syncthingStatus()}}.png` with each string the scope function `syncthingStatus` returns
 * literally; other expressions are left alone.
 */
function expandTemplate(template: string, scripts: string[]): string[] {
  const expression = /\{\{\s*([\w$]+)\(\)\s*\}\}/.exec(template);
  if (!expression?.[1]) return [];
  const values = scripts.flatMap((script) => returnedStrings(script, expression[1] ?? ''));
  return [...new Set(values)].flatMap((value) => assetPath(template.replace(expression[0], value), '/'));
}

/** The string literals `name = function () { ... }` returns: its body, up to the brace that closes it. */
function returnedStrings(script: string, name: string): string[] {
  const start = new RegExp(`\\b${name.replace(/\$/g, '\\$')}\\s*=\\s*function\\s*\\([^)]*\\)\\s*\\{`).exec(
    script,
  );
  if (!start) return [];
  let depth = 1;
  let end = start.index + start[0].length;
  for (; end < script.length && depth > 0; end++)
    depth += script[end] === '{' ? 1 : script[end] === '}' ? -1 : 0;
  const body = script.slice(start.index, end);
  return [...body.matchAll(/return\s+(["'])([\w-]+)\1/g)].map((match) => match[2] ?? '');
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
