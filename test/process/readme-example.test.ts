// The tap example of docs/cli-and-client.md, run as a new user runs it: syncd packed as a tarball and installed into a
// fresh project of its own, with the package.json setting it gives, and tap in that project.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { packageRoot } from '../../shared/paths.ts';
import { localPrebuilds } from '../helpers/prebuilds.ts';
import { outsideTap } from '../helpers/teardown-first.ts';

const run = promisify(execFile);

const root = packageRoot;
const readme = await readFile(join(root, 'docs', 'cli-and-client.md'), 'utf8');
const section = readme.slice(readme.indexOf('## A harness for integration tests'));
const example = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
const config = /```json\n([\s\S]*?)```/.exec(section)?.[1];

t.test("the README's tap example passes in a fresh project that installed the packed package", async (t) => {
  t.ok(example && config, 'the README has the example and its package.json setting');
  const project = await mkdtemp(join(tmpdir(), 'syncd-fresh-'));
  t.teardown(() => rm(project, { recursive: true, force: true }));
  // The tarball as `npm pack` makes it (dist/ is built by tap's before step), unpacked as npm installs it.
  const { stdout } = await run(
    'npm',
    ['pack', '--ignore-scripts', '--silent', '--pack-destination', project],
    {
      cwd: root,
    },
  );
  await writeFile(
    join(project, 'package.json'),
    JSON.stringify({
      name: 'fresh',
      version: '1.0.0',
      type: 'module',
      private: true,
      ...JSON.parse(config ?? '{}'),
    }),
  );
  // Installed as the README says, beside the tap this project uses (from npm's cache when it has it).
  const tarball = join(project, stdout.trim().split('\n').at(-1) ?? '');
  const tap = JSON.parse(await readFile(join(root, 'node_modules', 'tap', 'package.json'), 'utf8')).version;
  await run(
    'npm',
    ['install', '--prefer-offline', '--no-audit', '--no-fund', '--save-dev', `tap@${tap}`, tarball],
    {
      cwd: project,
      timeout: 120_000,
      env: { ...process.env, ...(await localPrebuilds(join(project, 'prebuilds'))) },
    },
  );
  const manifest = JSON.parse(await readFile(join(project, 'node_modules', 'syncd', 'package.json'), 'utf8'));
  t.same(Object.keys(manifest.dependencies ?? {}), ['better-sqlite3'], 'the native index database only');
  await mkdir(join(project, 'test'));
  await writeFile(join(project, 'test', 'service.test.ts'), example ?? '');
  const env = outsideTap();
  const result = await run(join(project, 'node_modules', '.bin', 'tap'), [], {
    cwd: project,
    env,
    timeout: 120_000,
  }).then(
    (ok) => ({ code: 0, output: ok.stdout + ok.stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({
      code: error.code,
      output: error.stdout + error.stderr,
    }),
  );
  if (result.code !== 0) t.fail(`tap exits ${result.code}:\n${result.output.slice(-2000)}`);
  else t.pass('tap exits 0');
  t.match(result.output, /# \{ total: 4, pass: 4 \}/, 'all four assertions passed');
});
