import { loopbackSyncthingHome } from '../../test/helpers/syncthing.ts';
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import getPort from 'get-port';
import { packageRoot, syncdBin } from '../../shared/paths.ts';
import { LOW_PRIORITY_NICENESS } from '../../worker/low-priority.ts';

const root = packageRoot;
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  scripts: { start: string };
};
// The Node flags `npm start` gives the supervisor (package.json: `exec node FLAGS dist/bin/syncd.js serve`).
const startFlags =
  /exec node (.*) dist\/bin\/syncd\.js serve/.exec(manifest.scripts.start)?.[1]?.split(' ') ?? [];
const API_KEY = 'bench-key-0123456789abcdefghij';

/** A running service under measurement. */
export interface Running {
  url: string;
  apiKey: string;
  /** The process started: syncd's supervisor, Syncthing's monitor. */
  process: ChildProcess;
  exited: Promise<void>;
  /** Ends it for good and removes its files. */
  stop(): Promise<void>;
}

/** Something the benchmark can start: a service of this interface or a bare HTTP server. */
export interface Target {
  name: string;
  start(): Promise<Running>;
}

/** syncd as `npm start` runs it (`node FLAGS dist/bin/syncd.js serve`), in a new home each time. */
export const syncd: Target = {
  name: 'syncd',
  async start() {
    return startSyncd(await mkdtemp(join(tmpdir(), 'syncd-bench-')), true);
  },
};

/** syncd started again and again in one home, as a container restarts: the identity exists already. */
export function syncdInOneHome(home: string): Target {
  return { name: 'syncd, home used before', start: () => startSyncd(home, false) };
}

/** syncd through `npm start --silent` in its folder, as containers run it. */
export const syncdViaNpm: Target = {
  name: 'syncd via npm start',
  async start() {
    const home = await mkdtemp(join(tmpdir(), 'syncd-bench-'));
    const port = await getPort({ host: '127.0.0.1' });
    return launch('npm', ['start', '--silent'], port, home, syncdEnv(home, port));
  },
};

async function startSyncd(home: string, removeHome: boolean): Promise<Running> {
  const port = await getPort({ host: '127.0.0.1' });
  // What npm start runs; SYNCD_BENCH_PROFILE=DIR: CPU profiles of the supervisor, the worker and its
  // threads, in DIR.
  const profile = process.env.SYNCD_BENCH_PROFILE;
  const flags = profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : [];
  return launch(
    process.execPath,
    [...startFlags, ...flags, syncdBin, 'serve'],
    port,
    removeHome ? home : undefined,
    syncdEnv(home, port),
  );
}

function syncdEnv(home: string, port: number): Record<string, string> {
  return {
    SYNCD_HOME: home,
    SYNCD_ADDRESS: `127.0.0.1:${port}`,
    SYNCD_SYNC_ADDRESS: 'tcp://127.0.0.1:0',
    SYNCD_API_KEY: API_KEY,
    SYNCD_LOG_LEVEL: 'warn',
  };
}

/**
 * One of the two minimal prototypes of the design (scripts/bench/limits/): the floor syncd is measured
 * against. `viaNpm`: through `npm start` in its folder, as syncd's own `npm start` is measured.
 */
function limit(name: string, folder: 'handoff' | 'held', viaNpm = false): Target {
  return {
    name,
    async start() {
      const port = await getPort({ host: '127.0.0.1' });
      const cwd = join(root, 'scripts', 'bench', 'limits', folder);
      const [command, args] = viaNpm ? ['npm', ['start', '--silent']] : [process.execPath, ['sup.mjs']];
      const env = { SYNCD_ADDRESS: `127.0.0.1:${port}`, SYNCD_API_KEY: API_KEY };
      return launch(command, args, port, undefined, env, cwd);
    },
  };
}

export const handoffLimit = limit('handoff prototype', 'handoff');
export const handoffLimitViaNpm = limit('handoff prototype via npm start', 'handoff', true);
export const heldLimit = limit('held-socket prototype', 'held');

export const syncthing: Target = {
  name: 'syncthing',
  async start() {
    const home = await mkdtemp(join(tmpdir(), 'syncthing-bench-'));
    const [port, listenPort] = [await getPort({ host: '127.0.0.1' }), await getPort({ host: '127.0.0.1' })];
    // Loopback only, nothing reaching out: no discovery, relays, NAT, reporting or upgrades.
    await loopbackSyncthingHome(home, listenPort);
    const args = [
      'serve',
      `--home=${home}`,
      '--no-browser',
      '--no-upgrade',
      `--gui-address=http://127.0.0.1:${port}`,
      `--gui-apikey=${API_KEY}`,
    ];
    return launch('syncthing', args, port, home, { STNODEFAULTFOLDER: '1' });
  },
};

// The servers syncd's worker is compared with run at its niceness (Syncthing's, with setLowPriority,
// the default): at 0 they took the two cores from the load generator that the worker, at 11, leaves it,
// and the comparison measured the scheduler, not the code.
const atWorkerNiceness = (args: string[]) => ['-n', String(LOW_PRIORITY_NICENESS), process.execPath, ...args];

export const bareNode: Target = {
  name: 'node:http',
  async start() {
    const port = await getPort({ host: '127.0.0.1' });
    return launch(
      'nice',
      atWorkerNiceness(['--import', 'tsx', join(root, 'scripts', 'bench', 'bare-server.ts'), String(port)]),
      port,
    );
  },
};

export const directApp: Target = {
  name: 'syncd app, no handoff',
  async start() {
    const port = await getPort({ host: '127.0.0.1' });
    return launch(
      'nice',
      atWorkerNiceness([join(root, 'dist', 'scripts', 'bench', 'direct-app.js'), String(port), API_KEY]),
      port,
    );
  },
};

async function launch(
  command: string,
  args: string[],
  port: number,
  home?: string,
  env: Record<string, string> = {},
  cwd = root,
): Promise<Running> {
  const child = spawn(command, args, { cwd, env: { ...process.env, ...env }, stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    url: `http://127.0.0.1:${port}`,
    apiKey: API_KEY,
    process: child,
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        // Both supervisors end their children on SIGTERM.
        child.kill('SIGTERM');
        const forced = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(forced);
      }
      if (home) await rm(home, { recursive: true, force: true });
    },
  };
}
