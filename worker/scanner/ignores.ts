import { readFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { IGNORE_FILE } from '../files/folder-fs.ts';

// The ignore file Syncthing reads in a folder's root: named where the folder's internal names are.
export { IGNORE_FILE };

/** A .stignore that cannot be used: the scan stops rather than index what was meant to be ignored. */
export class IgnoreError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'IgnoreError';
  }
}

interface Pattern {
  /** The pattern as Syncthing shows it expanded. */
  text: string;
  regex: RegExp;
  /** `!`: what it matches is not ignored. */
  include: boolean;
  /** `(?i)`: matched without regard to case. */
  foldCase: boolean;
  /** `(?d)`: may be deleted when it stands in the way of deleting a directory. */
  deletable: boolean;
}

/**
 * A folder's ignore patterns with Syncthing's syntax and rules (st:lib/ignore/ignore.go): one pattern
 * per line, `//` comments, `#include FILE`, the prefixes `!`, `(?i)` and `(?d)` in any order, globs with
 * `*`, `**`, `?`, `[…]`, `{a,b}` and `\` escapes, a leading `/` anchoring to the folder root, and a
 * pattern matching a directory matching what is below it. The first pattern that matches decides.
 */
export class Ignores {
  /** The lines of .stignore as written, or null when the folder has none. */
  readonly lines: string[] | null;
  readonly #patterns: Pattern[];

  private constructor(lines: string[] | null, patterns: Pattern[]) {
    this.lines = lines;
    this.#patterns = patterns;
  }

  static none(): Ignores {
    return new Ignores(null, []);
  }

  /** Reads `.stignore` in the folder (none: nothing ignored); an IgnoreError names a bad line or include. */
  static async load(folder: string): Promise<Ignores> {
    const path = join(folder, IGNORE_FILE);
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return Ignores.none();
      throw new IgnoreError(`${IGNORE_FILE} cannot be read: ${(error as Error).message}`);
    }
    const lines = splitLines(text);
    const patterns = await parseLines(lines, folder, path, new Set(), 0);
    return new Ignores(lines, patterns);
  }

  /** Patterns from lines given (POST /rest/db/ignores), checked before they are written. */
  static async parse(lines: string[], folder: string): Promise<Ignores> {
    return new Ignores(lines, await parseLines(lines, folder, join(folder, IGNORE_FILE), new Set(), 0));
  }

  get empty(): boolean {
    return this.#patterns.length === 0;
  }

  /** Whether a directory that is ignored may hide something that is not: then it must be walked. */
  get hasIncludes(): boolean {
    return this.#patterns.some((pattern) => pattern.include);
  }

  /** The patterns as Syncthing lists them expanded. */
  get expanded(): string[] {
    return this.#patterns.map((pattern) => pattern.text);
  }

  /** Whether `name` (relative to the folder, `/` between parts) is ignored. */
  ignored(name: string): boolean {
    const pattern = this.#first(name);
    return pattern !== undefined && !pattern.include;
  }

  /**
   * Whether `name` is ignored by a `(?d)` pattern: it may be removed when it stands in the way of
   * deleting its directory (Syncthing's IsDeletable).
   */
  deletable(name: string): boolean {
    const pattern = this.#first(name);
    return pattern !== undefined && !pattern.include && pattern.deletable;
  }

  // The first pattern that matches `name`: it decides.
  #first(name: string): Pattern | undefined {
    let lower: string | undefined;
    for (const pattern of this.#patterns) {
      const subject = pattern.foldCase ? (lower ??= name.toLowerCase()) : name;
      if (pattern.regex.test(subject)) return pattern;
    }
    return undefined;
  }
}

// Includes within includes are followed this deep; a loop is stopped by the lines already seen.
const MAX_INCLUDE_DEPTH = 10;

// Lines as Go's line scanner reads them: a last line break ends the last line, it begins none.
function splitLines(text: string): string[] {
  const lines = text.split(/\r?\n/).map((line) => line.trim());
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

async function parseLines(
  lines: string[],
  folder: string,
  file: string,
  seen: Set<string>,
  depth: number,
): Promise<Pattern[]> {
  const patterns: Pattern[] = [];
  const where = relative(folder, file) || IGNORE_FILE;
  for (const raw of lines) {
    // Syncthing reads each distinct line once, across includes too.
    if (seen.has(raw)) continue;
    seen.add(raw);
    if (raw === '' || raw.startsWith('//')) continue;
    const line = raw;
    if (line.startsWith('#include')) {
      const target = line.slice('#include'.length).trim();
      if (target === '' || !/^#include\s/.test(line)) {
        throw new IgnoreError(`${where}: "${raw}": #include needs a file name`);
      }
      if (depth >= MAX_INCLUDE_DEPTH) throw new IgnoreError(`${where}: "${raw}": includes nest too deep`);
      const included = join(dirname(file), target);
      let text: string;
      try {
        text = await readFile(included, 'utf8');
      } catch (error) {
        throw new IgnoreError(`${where}: "${raw}": cannot read ${target}: ${(error as Error).message}`);
      }
      patterns.push(...(await parseLines(splitLines(text), folder, included, seen, depth + 1)));
      continue;
    }
    const add = (text: string) => patterns.push(...parseLine(text, where, raw));
    if (line.endsWith('/**')) add(line);
    else if (line.endsWith('/')) add(`${line}**`);
    else {
      add(line);
      add(`${line}/**`);
    }
  }
  return patterns;
}

function parseLine(line: string, where: string, raw: string): Pattern[] {
  let include = false;
  let foldCase = false;
  let deletable = false;
  let rest = line;
  for (;;) {
    if (rest.startsWith('!') && !include) {
      include = true;
      rest = rest.slice(1);
    } else if (rest.startsWith('(?i)') && !foldCase) {
      foldCase = true;
      rest = rest.slice(4);
    } else if (rest.startsWith('(?d)') && !deletable) {
      deletable = true;
      rest = rest.slice(4);
    } else break;
  }
  if (rest === '') throw new IgnoreError(`${where}: "${raw}": missing pattern`);
  if (foldCase) rest = rest.toLowerCase();
  const make = (glob: string): Pattern => {
    let regex: RegExp;
    try {
      regex = new RegExp(`^${globToRegex(glob)}$`, 's');
    } catch (error) {
      throw new IgnoreError(`${where}: "${raw}": ${(error as Error).message}`);
    }
    return { text: glob, regex, include, foldCase, deletable };
  };
  // Rooted at the folder; else matched at any depth, as Syncthing adds both.
  if (rest.startsWith('/')) return [make(rest.slice(1))];
  if (rest.startsWith('**/')) return [make(rest), make(rest.slice(3))];
  return [make(rest), make(`**/${rest}`)];
}

/** A glob as gobwas/glob reads it with `/` as the separator, as a regular expression body. */
export function globToRegex(glob: string): string {
  let out = '';
  let i = 0;
  const fail = (why: string) => {
    throw new Error(`${why} in "${glob}"`);
  };
  while (i < glob.length) {
    const char = glob[i] as string;
    if (char === '\\') {
      const next = glob[i + 1];
      if (next === undefined) fail('a pattern cannot end with \\');
      out += escape(next as string);
      i += 2;
    } else if (char === '*') {
      if (glob[i + 1] === '*') {
        out += '.*';
        i += 2;
      } else {
        out += '[^/]*';
        i += 1;
      }
    } else if (char === '?') {
      out += '[^/]';
      i += 1;
    } else if (char === '[') {
      const end = glob.indexOf(']', i + 2);
      if (end < 0) fail('an unclosed [');
      let body = glob.slice(i + 1, end);
      const negated = body.startsWith('!');
      if (negated) body = body.slice(1);
      if (body === '') fail('an empty []');
      out += `[${negated ? '^' : ''}${body.replace(/[\\\]^]/g, (c) => `\\${c}`)}]`;
      i = end + 1;
    } else if (char === '{') {
      // Alternatives, which may nest: split at the commas of this level.
      let depth = 0;
      let j = i;
      const parts: string[] = [];
      let start = i + 1;
      for (; j < glob.length; j++) {
        const c = glob[j];
        if (c === '\\') j += 1;
        else if (c === '{') depth += 1;
        else if (c === '}') {
          depth -= 1;
          if (depth === 0) break;
        } else if (c === ',' && depth === 1) {
          parts.push(glob.slice(start, j));
          start = j + 1;
        }
      }
      if (j >= glob.length) fail('an unclosed {');
      parts.push(glob.slice(start, j));
      out += `(?:${parts.map(globToRegex).join('|')})`;
      i = j + 1;
    } else {
      out += escape(char);
      i += 1;
    }
  }
  return out;
}

function escape(char: string): string {
  return /[.*+?^${}()|[\]\\/-]/.test(char) ? `\\${char}` : char;
}
