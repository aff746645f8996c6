// Writes the table of configuration fields in docs/configuration.md from shared/config/field-status.ts,
// between its markers; the tests check that the page says what the table says.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type FieldStatus, SECTIONS } from '../../shared/config/field-status.ts';
import { formatted } from '../formatted.ts';

export const PAGE = fileURLToPath(new URL('../../docs/configuration.md', import.meta.url));
const START = '<!-- fields: written by scripts/docs/config-fields.ts -->';
const END = '<!-- fields end -->';

const words: Record<FieldStatus['status'], string> = {
  acts: 'acts',
  stored: 'stored',
  fixed: 'fixed',
  refused: '**refused**',
};

/** The tables, one per section: each field, its default, what syncd does with it. */
export function fieldTables(): string {
  const parts: string[] = [];
  for (const { name, fields, defaults } of SECTIONS) {
    parts.push(`### \`${name}\``, '', '| field | default | status | |', '|---|---|---|---|');
    for (const [field, status] of Object.entries(fields) as Array<[string, FieldStatus]>) {
      const value = JSON.stringify((defaults as Record<string, unknown>)[field]);
      const note = 'why' in status ? status.why : (status.note ?? '');
      parts.push(`| \`${field}\` | \`${value}\` | ${words[status.status]} | ${note} |`);
    }
    parts.push('');
  }
  return parts.join('\n');
}

/** The page with its tables as `fieldTables` writes them, formatted as `npm run lint` wants it. */
export async function pageWithTables(page: string): Promise<string> {
  const from = page.indexOf(START);
  const to = page.indexOf(END);
  if (from < 0 || to < from) throw new Error(`${PAGE} has lost its markers`);
  const text = `${page.slice(0, from + START.length)}\n\n${fieldTables()}\n${page.slice(to)}`;
  return formatted(PAGE, text);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(PAGE, await pageWithTables(readFileSync(PAGE, 'utf8')));
}
