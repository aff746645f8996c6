import { loopbackSyncthingHome } from '../../test/helpers/syncthing.ts';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import getPort from 'get-port';
import { packageRoot, syncdBin } from '../../shared/paths.ts';

const root = packageRoot;
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

export const syncd: Target = {
  name: 'syncd',
  async start() {
    const home = await mkdtemp(join(tmpdir(), 'syncd-bench-'));
    const port = await getPort({ host: '127.0.0.1' });
    // What npm start runs.
    // SYNCD_BENCH_PROFILE=DIR: CPU profiles of the supervisor, the worker and its threads, in DIR.
    const profile = process.env.SYNCD_BENCH_PROFILE;
    const flags = profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : [];
    return launch(process.execPath, [...flags, syncdBin, 'serve'], port, home, {
      SYNCD_HOME: home,
      SYNCD_ADDRESS: `127.0.0.1:${port}`,
      SYNCD_SYNC_ADDRESS: 'tcp://127.0.0.1:0',
      SYNCD_API_KEY: API_KEY,
      SYNCD_LOG_LEVEL: 'warn',
    });
  },
};

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

export const bareNode: Target = {
  name: 'node:http',
  async start() {
    const port = await getPort({ host: '127.0.0.1' });
    return launch(
      process.execPath,
      ['--import', 'tsx', join(root, 'scripts', 'bench', 'bare-server.ts'), String(port)],
      port,
    );
  },
};

export const directApp: Target = {
  name: 'syncd app, no handoff',
  async start() {
    const port = await getPort({ host: '127.0.0.1' });
    return launch(
      process.execPath,
      [join(root, 'dist', 'scripts', 'bench', 'direct-app.js'), String(port), API_KEY],
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
): Promise<Running> {
  const child = spawn(command, args, { cwd: root, env: { ...process.env, ...env }, stdio: 'ignore' });
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
