// A suite's figures as BENCHMARKS.md shows them: one row per measure, each saying when, where and by
// which command it was measured, so that a row read alone says what its ratio compares.
import { execFileSync } from 'node:child_process';
import { cpus, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { quote } from 'shell-quote';

/** One figure of syncd's, beside what it is compared with. */
export interface Measure {
  measure: string;
  figure: string;
  /** Syncthing's figure or a prototype's, measured in the same run: `Syncthing 480`. */
  reference?: string;
  ratio?: string;
  target?: string;
  /** Undefined where there is no target, or nothing to judge it by (no Syncthing installed). */
  met?: boolean;
}

/** What every row of one run shares. */
export interface Run {
  /** UTC, to the minute. */
  date: string;
  machine: string;
  command: string;
  /** Node's version, Syncthing's where it ran, and the commit measured. */
  software: string;
}

export function thisRun(args: readonly string[], syncthingVersion: string | undefined): Run {
  const cores = cpus();
  return {
    date: new Date().toISOString().slice(0, 16).replace('T', ' '),
    machine: `${cores.length} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, ${cores[0]?.model.trim() ?? 'unknown CPU'}`,
    command: args.length === 0 ? 'npm run bench' : `npm run bench -- ${quote([...args])}`,
    software: [`Node ${process.version}`, syncthingVersion, commit()].filter(Boolean).join('; ') + '.',
  };
}

const COLUMNS = [
  'date (UTC)',
  'machine',
  'command',
  'measure',
  'figure',
  'reference',
  'ratio',
  'target',
  'verdict',
];

/** The section's body: the run's software, then the table. */
export function sectionTable(run: Run, measures: readonly Measure[]): string {
  const line = (cells: readonly string[]) => `| ${cells.map(cell).join(' | ')} |`;
  const verdict = (met: boolean | undefined) => (met === undefined ? '' : met ? 'met' : 'missed');
  return [
    run.software,
    '',
    line(COLUMNS),
    line(COLUMNS.map(() => '---')),
    ...measures.map((m) =>
      line([
        run.date,
        run.machine,
        `\`${run.command}\``,
        m.measure,
        m.figure,
        m.reference ?? '–',
        m.ratio ?? '',
        m.target ?? '',
        verdict(m.met),
      ]),
    ),
  ].join('\n');
}

// A table's cell is one line, and a pipe in it would start the next cell.
function cell(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').replaceAll('|', '\\|');
}

/** The commit measured, and whether the work tree differed from it. */
function commit(): string {
  const git = (...args: string[]) =>
    execFileSync('git', args, {
      cwd: fileURLToPath(new URL('.', import.meta.url)),
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  try {
    const head = git('rev-parse', '--short', 'HEAD');
    const changed = git('status', '--porcelain', '--untracked-files=no');
    return changed === '' ? `at ${head}` : `at ${head} with uncommitted changes`;
  } catch {
    return 'commit unknown';
  }
}
