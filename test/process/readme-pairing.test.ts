// The README's "Pair it with a Syncthing device" is the first thing a user types, and nothing else runs
// it: this test takes its sh block from README.md as it stands and runs it with bash against a real
// Syncthing 1.19, then checks that the folder really syncs, both ways. The walk-through uses fixed ports
// (8384, 8385, 22000, 22001) and `~`, so it all runs in a network namespace of the test's own, with HOME
// a temporary folder and no XDG_* variables: nothing touches the host's ports or the real home, and
// Syncthing announces nothing (discovery, relays, NAT, usage and crash reports off). The namespace is
// removed with every process in it (syncd's supervisor and worker, Syncthing), and the folder with it,
// whatever the outcome.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { openSync, closeSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import t from 'tap';
import { namespacesUnavailable, removeNamespaces } from '../helpers/netns.ts';
import { isAlive } from '../helpers/service.ts';
import { hasSyncthing, NO_SYNCTHING, pollUntil } from '../helpers/syncthing.ts';

// Syncthing starting, the walk-through (npm start on a loaded machine) and two syncs of up to 120 s
// each take longer than the runner's 180 s.
t.setTimeout(600_000);

const checkout = join(import.meta.dirname, '..', '..');
const SECTION = 'Pair it with a Syncthing device';

/** The sh block of the README's section, or undefined when the section or its block is gone. */
async function walkThrough(): Promise<string | undefined> {
  const readme = await readFile(join(checkout, 'README.md'), 'utf8');
  const section = readme.split(/^## /m).find((part) => part.startsWith(`${SECTION}\n`));
  return section?.match(/^```sh\n([\s\S]*?)^```$/m)?.[1];
}

/** The last lines of a log (those `pick` keeps), for a failure's diagnostics. */
async function tail(file: string, lines: number, pick = (_line: string) => true): Promise<string> {
  const text = await readFile(file, 'utf8').catch((error: Error) => `(unreadable: ${error.message})`);
  return text.trimEnd().split('\n').filter(pick).slice(-lines).join('\n');
}

/** The walk-through's output, apart from the JSON log lines of the service it started, and those. */
async function walkLog(file: string): Promise<{ walkThrough: string; syncd: string }> {
  const json = (line: string) => line.startsWith('{"level"');
  return { walkThrough: await tail(file, 30, (line) => !json(line)), syncd: await tail(file, 15, json) };
}

/**
 * Settles when the child exits, not when its output closes (the service it left running holds that):
 * undefined for exit code 0, else what happened.
 */
function exited(child: ChildProcess): Promise<string | undefined> {
  return new Promise((resolve) => {
    child.once('error', (error) => resolve(`it did not start: ${error.message}`));
    child.once('exit', (code, signal) =>
      resolve(
        code === 0 ? undefined : code === null ? `it was killed by ${signal}` : `it exited with ${code}`,
      ),
    );
  });
}

t.test(`the README has a "${SECTION}" section with an sh block to run`, async (t) => {
  const block = await walkThrough();
  t.ok(block, `README.md: a "## ${SECTION}" section whose first code block is \`\`\`sh`);
  t.match(block ?? '', /npm start/, 'it starts syncd');
});

const noNamespaces = await namespacesUnavailable();
const skip = !hasSyncthing ? NO_SYNCTHING : (noNamespaces ?? false);

// What the run left for the last test to check: the namespace, the processes seen in it, the folder.
const left: { namespace?: string; pids: number[]; folder?: string } = { pids: [] };

t.test(
  'the walk-through, run as written in a network namespace, pairs syncd with Syncthing and the folder syncs both ways',
  { skip },
  async (t) => {
    const block = await walkThrough();
    if (!block) return t.fail(`README.md has no "## ${SECTION}" section with an sh block`);
    // The one change to the README's text: the dependencies are installed (and dist/ built by the
    // runner's `before` step) already, so `npm ci && ` is dropped where it begins a line.
    const script = `set -euo pipefail\n${block.replace(/^npm ci && /m, '')}`;

    const folder = await mkdtemp(join(tmpdir(), 'syncd-readme-'));
    const namespace = `syncd-readme-${randomBytes(4).toString('hex')}`;
    Object.assign(left, { namespace, folder });
    t.teardown(async () => {
      // Politely first (syncd's supervisor stops its worker), then removeNamespaces kills what is left.
      const pids = async () =>
        (await execa('ip', ['netns', 'pids', namespace], { reject: false })).stdout
          .split('\n')
          .filter(Boolean)
          .map(Number);
      left.pids = await pids();
      for (const pid of left.pids) {
        try {
          process.kill(pid, 'SIGTERM');
        } catch {
          // Gone already.
        }
      }
      await pollUntil(
        'the processes in the namespace ending',
        async () => (await pids()).length === 0,
        10_000,
      ).catch(() => undefined);
      await removeNamespaces([namespace]);
      await rm(folder, { recursive: true, force: true });
    });
    await execa('ip', ['netns', 'add', namespace]);
    await execa('ip', ['-n', namespace, 'link', 'set', 'lo', 'up']);

    const home = join(folder, 'home');
    await mkdir(home);
    // A user's shell: HOME, and a PATH without the checkout's node_modules/.bin that npm gave the runner.
    const env: NodeJS.ProcessEnv = {
      HOME: home,
      PATH: (process.env.PATH ?? '')
        .split(':')
        .filter((dir) => !dir.includes('node_modules'))
        .join(':'),
      ...(process.env.LANG ? { LANG: process.env.LANG } : {}),
    };
    const inside = (command: string[]) => ['netns', 'exec', namespace, ...command];
    const run = (command: string[]) => execa('ip', inside(command), { env, extendEnv: false });

    // Syncthing with its default configuration, where `syncthing cli` finds it (~/.config/syncthing),
    // made to reach out to nothing; then started, and asked until it answers.
    await run(['syncthing', 'generate', '--no-default-folder', '--skip-port-probing']);
    const configPath = join(home, '.config', 'syncthing', 'config.xml');
    await writeFile(
      configPath,
      (await readFile(configPath, 'utf8'))
        .replace(
          /<(globalAnnounceEnabled|localAnnounceEnabled|relaysEnabled|natEnabled|startBrowser|crashReportingEnabled)>true</g,
          '<$1>false<',
        )
        .replace(/<urAccepted>\d+</, '<urAccepted>-1<')
        .replace(/<autoUpgradeIntervalH>\d+</, '<autoUpgradeIntervalH>0<'),
    );
    const syncthingLog = join(folder, 'syncthing.log');
    const syncthingOut = openSync(syncthingLog, 'w');
    // One process (no monitor), killed with this test process however it ends (see helpers/syncthing.ts).
    spawn(
      'setpriv',
      [
        '--pdeathsig',
        'KILL',
        'ip',
        ...inside(['syncthing', 'serve', '--no-browser', '--no-restart', '--no-upgrade']),
      ],
      {
        env: { ...env, STMONITORED: '1' },
        stdio: ['ignore', syncthingOut, syncthingOut],
      },
    );
    closeSync(syncthingOut);
    const log = join(folder, 'walk-through.log');
    // What a failure shows: the ends of the logs, which go with the folder.
    const logs = async () => ({ ...(await walkLog(log)), syncthing: await tail(syncthingLog, 20) });
    /** Undefined once `check` holds, else why not (pollUntil's message), polling every 500 ms. */
    const failure = (what: string, check: () => Promise<boolean>, ms: number) =>
      pollUntil(what, check, ms, 500).then(
        () => undefined,
        (error: Error) => error.message,
      );
    /** Passes `message`, or fails it with why not and the ends of the logs; whether it passed. */
    const verdict = async (why: string | undefined, message: string) => {
      if (why) t.fail(`${message}: ${why}`, await logs());
      else t.pass(message);
      return !why;
    };

    const answering = await failure(
      'Syncthing answering `syncthing cli show system`',
      async () => (await run(['syncthing', 'cli', 'show', 'system'])).exitCode === 0,
      60_000,
    );
    if (!(await verdict(answering, 'Syncthing answers `syncthing cli`'))) return;

    // The walk-through, from the checkout, its output (and the background service's) in a file.
    const out = openSync(log, 'w');
    const walk = spawn('ip', inside(['bash', '-c', script]), {
      cwd: checkout,
      env,
      stdio: ['ignore', out, out],
    });
    closeSync(out);
    let bound: NodeJS.Timeout | undefined;
    const failed = await Promise.race([
      exited(walk),
      new Promise<string>((resolve) => (bound = setTimeout(resolve, 180_000, 'it still ran after 180 s'))),
    ]);
    clearTimeout(bound);
    if (!(await verdict(failed, 'the walk-through runs to its end and exits 0'))) return;

    const holds = (file: string, text: string) => async () => (await readFile(file, 'utf8')) === text;
    const theirs = join(home, 'Sync', 'shared');
    const mine = join(home, 'shared');
    const hello = await failure(
      "hello.txt arriving in Syncthing's ~/Sync/shared",
      holds(join(theirs, 'hello.txt'), 'hello\n'),
      120_000,
    );
    if (!(await verdict(hello, "~/Sync/shared/hello.txt holds syncd's hello"))) return;

    const text = `from Syncthing ${randomBytes(8).toString('hex')}\n`;
    await writeFile(join(theirs, 'from-syncthing.txt'), text);
    const back = await failure(
      "a file made on Syncthing's side arriving in ~/shared",
      holds(join(mine, 'from-syncthing.txt'), text),
      120_000,
    );
    await verdict(back, "~/shared/from-syncthing.txt holds what was written on Syncthing's side");
  },
);

t.test('nothing is left behind: no namespace, no process that ran in it, no folder', { skip }, async (t) => {
  if (!left.namespace || !left.folder) return t.fail('the walk-through did not get as far as its namespace');
  const namespaces = (await execa('ip', ['netns', 'list'])).stdout;
  t.notMatch(namespaces, left.namespace, `${left.namespace} is removed`);
  t.same(
    left.pids.filter((pid) => isAlive(pid)),
    [],
    `every process that was in it at the end is gone (${left.pids.length}: ${left.pids.join(', ')})`,
  );
  t.equal(await stat(left.folder).catch(() => undefined), undefined, `${left.folder} is removed`);
});
