import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { checkSections, sectionsOf, withSection, writeSections } from '../../scripts/bench/report-file.ts';
import { sectionTable } from '../../scripts/bench/report-table.ts';

const page = [
  '# Benchmarks',
  '',
  'What is measured, and how.',
  '',
  '## Indexing',
  '',
  'Prose about indexing.',
  '',
  '<!-- bench:scan -->',
  '',
  '| old scan table |',
  '',
  '<!-- /bench:scan -->',
  '',
  '## Moving a folder',
  '',
  '<!-- bench:sync -->',
  '',
  '| old sync table |',
  '',
  '<!-- /bench:sync -->',
  '',
  '## Where a target is missed',
  '',
  '- a reason',
  '',
].join('\n');

t.test('a section is replaced, and nothing else of the file changes', async (t) => {
  const next = withSection(page, { suite: 'scan', title: 'Indexing', body: '| new scan table |' });
  t.equal(
    next,
    page.replace('| old scan table |', '| new scan table |'),
    'the table between the markers, only',
  );
  t.match(next, '| old sync table |', "another suite's table is kept");
  t.match(next, 'Prose about indexing.', 'and the prose around the tables');
});

t.test('a section the file lacks is added after the last section, with its heading', async (t) => {
  const next = withSection(page, { suite: 'hostile', title: 'Hostile devices', body: '| hostile table |' });
  const block =
    '## Hostile devices\n\n<!-- bench:hostile -->\n\n| hostile table |\n\n<!-- /bench:hostile -->';
  t.match(
    next,
    `<!-- /bench:sync -->\n\n${block}\n\n## Where a target is missed`,
    'before the text after them',
  );
  t.equal(next.replace(`\n\n${block}`, ''), page, 'everything else as it was');
  t.same([...sectionsOf(next).keys()], ['scan', 'sync', 'hostile']);
  t.equal(
    withSection('# Benchmarks\n', { suite: 'scan', title: 'Indexing', body: 'x' }),
    '# Benchmarks\n\n## Indexing\n\n<!-- bench:scan -->\n\nx\n\n<!-- /bench:scan -->\n',
    'a file without sections gets it at its end',
  );
});

t.test('a file whose markers do not pair up is refused', async (t) => {
  const section = { suite: 'scan', title: 'Indexing', body: 'x' };
  const broken = {
    'a section never closed': page.replace('<!-- /bench:sync -->', ''),
    'a closing marker without its opening': page.replace('<!-- bench:sync -->', ''),
    'a section inside another': page.replace('| old scan table |', '<!-- bench:sync -->'),
    'a suite twice': `${page}\n<!-- bench:scan -->\n<!-- /bench:scan -->\n`,
    'markers of two suites crossed': page.replace('<!-- /bench:scan -->', '<!-- /bench:sync -->'),
  };
  for (const [what, text] of Object.entries(broken)) {
    t.throws(() => withSection(text, section), what);
    t.throws(() => withSection(text, { ...section, suite: 'connect' }), `${what}, for another suite too`);
  }
});

t.test('the file is written formatted, and a broken one is left as it was', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'syncd-bench-report-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'BENCHMARKS.md');
  await writeFile(file, page);
  const run = {
    date: '2026-11-26 17:53',
    machine: '2 cores, 24 GiB, AMD EPYC',
    command: 'npm run bench -- --scan',
    software: 'Node v20.20.2.',
  };
  const body = sectionTable(run, [
    {
      measure: 'index (ms)',
      figure: '409',
      reference: 'Syncthing 480',
      ratio: '0.85×',
      target: '≤ Syncthing',
      met: true,
    },
    { measure: 'a | in a cell', figure: '1' },
  ]);
  await writeSections(file, [{ suite: 'scan', title: 'Indexing', body }]);
  const written = await readFile(file, 'utf8');
  t.match(
    written,
    /\| date \(UTC\) +\| machine +\| command +\| measure +\| figure +\| reference +\| ratio +\| target +\| verdict +\|/,
  );
  t.match(
    written,
    /\| 2026-11-26 17:53 \| 2 cores, 24 GiB, AMD EPYC \| `npm run bench -- --scan` \| index \(ms\) +\| 409 +\| Syncthing 480 \| 0\.85× \| ≤ Syncthing \| met +\|/,
  );
  t.match(written, 'a \\| in a cell', 'a pipe in a cell is escaped');
  t.match(written, '| old sync table |', 'the other suite kept');

  const broken = page.replace('<!-- /bench:sync -->', '');
  await writeFile(file, broken);
  await t.rejects(checkSections(file), { message: /BENCHMARKS\.md: <!-- bench:sync --> is never closed/ });
  await t.rejects(writeSections(file, [{ suite: 'scan', title: 'Indexing', body }]));
  t.equal(await readFile(file, 'utf8'), broken, 'untouched');
});
