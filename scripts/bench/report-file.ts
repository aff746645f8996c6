// BENCHMARKS.md keeps one section per suite between markers, `<!-- bench:NAME -->` and
// `<!-- /bench:NAME -->`. A run replaces the sections of the suites it ran and nothing else, so that
// each suite can be refreshed alone and the prose around the tables stays as its editors wrote it.
import { readFile, writeFile } from 'node:fs/promises';
import { formatted } from '../formatted.ts';

/** What a suite writes: its table, under its name in the markers. */
export interface Section {
  suite: string;
  /** The heading it gets when the file has no section of it yet. */
  title: string;
  /** What goes between the markers. */
  body: string;
}

interface Span {
  /** Just after the opening marker. */
  start: number;
  /** At the closing marker. */
  end: number;
  /** Just after the closing marker. */
  after: number;
}

const MARKER = /<!-- (\/?)bench:([a-z0-9-]+) -->/g;

const opening = (suite: string) => `<!-- bench:${suite} -->`;
const closing = (suite: string) => `<!-- /bench:${suite} -->`;

/**
 * The sections of a file by suite. A file whose markers do not pair up (one left open, one closing
 * nothing, one inside another, a suite twice) is refused: where its table ends would be a guess, and a
 * wrong guess overwrites what someone wrote.
 */
export function sectionsOf(text: string): Map<string, Span> {
  const found = new Map<string, Span>();
  let open: { suite: string; start: number } | undefined;
  for (const match of text.matchAll(MARKER)) {
    const [marker, slash, suite = ''] = match;
    if (slash === '') {
      if (open) throw new Error(`${marker} opens inside the section of ${open.suite}`);
      if (found.has(suite)) throw new Error(`${marker} appears twice`);
      open = { suite, start: match.index + marker.length };
    } else {
      if (open?.suite !== suite) throw new Error(`${marker} closes no section of ${suite}`);
      found.set(suite, { start: open.start, end: match.index, after: match.index + marker.length });
      open = undefined;
    }
  }
  if (open) throw new Error(`${opening(open.suite)} is never closed`);
  return found;
}

/** The text with the suite's section replaced, or added after the last section when it has none. */
export function withSection(text: string, section: Section): string {
  const all = sectionsOf(text);
  const body = `\n\n${section.body.trim()}\n\n`;
  const span = all.get(section.suite);
  if (span) return text.slice(0, span.start) + body + text.slice(span.end);
  const block = `## ${section.title}\n\n${opening(section.suite)}${body}${closing(section.suite)}`;
  // After the last section, so that the tables stay together ahead of whatever follows them.
  const after = Math.max(-1, ...[...all.values()].map((each) => each.after));
  if (after < 0) return `${text.trimEnd()}\n\n${block}\n`.trimStart();
  return `${text.slice(0, after)}\n\n${block}${text.slice(after)}`;
}

/** Throws when the file's markers do not pair up; a missing file is an empty one. */
export async function checkSections(path: string): Promise<void> {
  try {
    sectionsOf(await readText(path));
  } catch (error) {
    throw new Error(`${path}: ${(error as Error).message}`, { cause: error });
  }
}

/** Writes the sections into the file, formatted as `npm run lint` wants it. */
export async function writeSections(path: string, sections: Section[]): Promise<void> {
  let text = await readText(path);
  try {
    for (const section of sections) text = withSection(text, section);
  } catch (error) {
    throw new Error(`${path}: ${(error as Error).message}`, { cause: error });
  }
  await writeFile(path, await formatted(path, text));
}

async function readText(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw error;
  }
}
