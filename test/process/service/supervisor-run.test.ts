import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import getPort from 'get-port';
import { Writable } from 'node:stream';
import t from 'tap';
import { runSupervisor } from '../../../supervisor/run.ts';
import { call, startService, syncdBin } from '../../helpers/service.ts';

async function tempHome(t: { teardown(fn: () => unknown): void }) {
  const dir = await mkdtemp(join(tmpdir(), 'syncd-run-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Pids of the processes whose environment holds `marker` (a worker outlives its supervisor's exit). */
async function processesMarked(marker: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const environ = await readFile(`/proc/${entry}/environ`, 'latin1').catch(() => '');
    if (environ.includes(marker)) pids.push(Number(entry));
  }
  return pids;
}

/**
 * Runs the supervisor expecting it to stop at once; returns its exit code, log lines, and the
 * processes it started that are still there a moment later (the worker it starts early must not be).
 */
async function runToExit(env: Record<string, string>, args: string[] = []) {
  const mark = randomUUID();
  const marker = `SYNCD_TEST_RUN_MARK=${mark}`;
  const result = await execa('node', [syncdBin, 'serve', ...args], {
    env: { SYNCD_SYNC_ADDRESS: 'tcp://127.0.0.1:0', SYNCD_TEST_RUN_MARK: mark, ...env },
    reject: false,
    timeout: 20_000,
    stdin: 'ignore',
  });
  const lines = result.stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
  let left = await processesMarked(marker);
  for (let tries = 0; left.length > 0 && tries < 50; tries++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    left = await processesMarked(marker);
  }
  return { exitCode: result.exitCode, lines, stderr: result.stderr, left };
}

t.test('the generated key is stored and reused across starts', async (t) => {
  const home = await tempHome(t);
  const env = { SYNCD_API_KEY: '' };
  const first = await startService(t, { home, env });
  const written = await readFile(join(home, 'config.json'), 'utf8');
  const { apiKey } = JSON.parse(written).config.gui;
  t.ok(apiKey.length >= 32, 'a long key');
  t.equal((await stat(join(home, 'config.json'))).mode & 0o777, 0o600);
  t.equal(
    (await call({ url: first.url, apiKey }, 'GET', '/rest/system/ping')).status,
    200,
    'it is the key served',
  );
  t.equal((await call({ url: first.url, apiKey }, 'POST', '/rest/system/shutdown')).status, 200);
  t.equal((await first.exited).exitCode, 0);

  const second = await startService(t, { home, env });
  t.equal(
    (await call({ url: second.url, apiKey }, 'GET', '/rest/system/ping')).status,
    200,
    'the same key after a new start',
  );
  t.equal(await readFile(join(home, 'config.json'), 'utf8'), written, 'config.json unchanged');
});

t.test('the bound address is logged and written into the home, port 0 included', async (t) => {
  const home = await tempHome(t);
  const service = await startService(t, { home, env: { SYNCD_ADDRESS: '127.0.0.1:0' } });
  const ready = await service.waitForLog((line) => line.msg === 'ready');
  t.match(ready.address, /^127\.0\.0\.1:\d+$/);
  t.not(ready.address, '127.0.0.1:0');
  t.equal((await readFile(join(home, 'address'), 'utf8')).trim(), ready.address);
  const status = (
    await call({ url: `http://${ready.address}`, apiKey: service.apiKey }, 'GET', '/rest/system/status')
  ).body;
  t.equal(status.guiAddressUsed, ready.address);
  await call({ url: `http://${ready.address}`, apiKey: service.apiKey }, 'POST', '/rest/system/shutdown');
  await service.exited;
  await t.rejects(stat(join(home, 'address')), { code: 'ENOENT' }, 'removed at shutdown');
});

t.test('bad settings stop the supervisor with code 2 and one line naming them', async (t) => {
  const home = await tempHome(t);
  const busy = createServer();
  const port = await getPort({ host: '127.0.0.1' });
  await new Promise<void>((resolve) => busy.listen(port, '127.0.0.1', resolve));
  t.teardown(() => busy.close());
  const fileHome = join(home, 'a-file');
  await writeFile(fileHome, '');

  const cases: Array<[string, Record<string, string>, string[], RegExp]> = [
    [
      'a port in use',
      { SYNCD_ADDRESS: `127.0.0.1:${port}` },
      [],
      /--address \/ SYNCD_ADDRESS: cannot listen on .*in use/,
    ],
    ['a malformed address', {}, ['--address', 'nonsense'], /--address \/ SYNCD_ADDRESS/],
    ['an unusable home', { SYNCD_HOME: join(fileHome, 'home') }, [], /--home \/ SYNCD_HOME: cannot use/],
    ['a short key', { SYNCD_API_KEY: 'short' }, [], /--api-key \/ SYNCD_API_KEY/],
    ['an unknown flag', {}, ['--colour'], /Unknown option '--colour'/],
    [
      'a request timeout shorter than the headers timeout',
      { SYNCD_REQUEST_TIMEOUT: '5s', SYNCD_HEADERS_TIMEOUT: '10s' },
      [],
      /--request-timeout \/ SYNCD_REQUEST_TIMEOUT and --headers-timeout \/ SYNCD_HEADERS_TIMEOUT/,
    ],
    ['a duration past 24 days', {}, ['--drain-timeout', '30d'], /--drain-timeout \/ SYNCD_DRAIN_TIMEOUT/],
  ];
  for (const [what, env, args, message] of cases) {
    const { exitCode, lines, left } = await runToExit(
      { SYNCD_HOME: home, SYNCD_ADDRESS: '127.0.0.1:0', ...env },
      args,
    );
    t.equal(exitCode, 2, `${what}: exit code`);
    t.equal(lines.length, 1, `${what}: one line`);
    t.match(lines[0], { level: 60, role: 'supervisor', msg: message }, what);
    t.same(left, [], `${what}: no worker left behind`);
  }
});

t.test('a malformed config.json stops the supervisor with code 2 and is left as it was', async (t) => {
  const home = await tempHome(t);
  const path = join(home, 'config.json');
  await writeFile(path, '{"apiKey": "abc', { mode: 0o600 });
  const { exitCode, lines } = await runToExit({ SYNCD_HOME: home, SYNCD_ADDRESS: '127.0.0.1:0' });
  t.equal(exitCode, 2);
  t.equal(lines.length, 1);
  t.match(lines[0].msg, new RegExp(`${path}: is not valid JSON`));
  t.equal(await readFile(path, 'utf8'), '{"apiKey": "abc');
});

t.test(
  'a configuration made invalid by hand stops the supervisor with code 2 naming the field',
  async (t) => {
    const home = await tempHome(t);
    const path = join(home, 'config.json');
    const text = JSON.stringify({
      version: 2,
      config: { gui: { apiKey: 'a-key-long-enough-0123' }, folders: [{ id: 'docs', path: 'docs' }] },
    });
    await writeFile(path, text, { mode: 0o600 });
    const { exitCode, lines } = await runToExit({ SYNCD_HOME: home, SYNCD_ADDRESS: '127.0.0.1:0' });
    t.equal(exitCode, 2);
    t.match(lines[0].msg, `${path}: config.folders[0].path: "docs" is relative`);
    t.equal(await readFile(path, 'utf8'), text, 'never overwritten');
  },
);

t.test('--help prints every setting and exits 0', async (t) => {
  const result = await execa('node', [syncdBin, 'serve', '--help'], { reject: false });
  t.equal(result.exitCode, 0);
  for (const name of [
    '--home',
    'SYNCD_HOME',
    '--address',
    '--api-key',
    '--log-level',
    '--drain-timeout',
    '--crash-limit',
  ]) {
    t.match(result.stdout, name);
  }
});

t.test(
  'at a terminal a setting that cannot be used is also told as text, with the pointer to --help',
  async (t) => {
    const told: string[] = [];
    const lines: string[] = [];
    const signals = { deliverTo: () => {}, release: () => {} };
    const code = await runSupervisor(
      ['--colour'],
      { HOME: t.testdir() },
      {
        signals,
        stdin: process.stdin,
        tell: (text) => told.push(text),
        log: new Writable({ write: (chunk, _encoding, done) => done(void lines.push(chunk.toString())) }),
      },
    );
    t.equal(code, 2);
    t.equal(lines.length, 1, 'the JSON line for log collectors');
    t.match(
      told.join(''),
      /^syncd serve: command line: Unknown option '--colour'.*\nRun syncd serve --help for the settings\.\n$/s,
    );
  },
);
