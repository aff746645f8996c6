// A real Syncthing 1.19 (Debian's `syncthing`) as the other device in compatibility tests: its own
// home, loopback only, nothing reaching out (no discovery, relays, NAT, usage reports or upgrades).
import { type ChildProcess, spawn } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { rmSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { execa } from 'execa';
import getPort from 'get-port';
import { deviceId } from '../../shared/device-id.ts';
import './teardown-first.ts';
import type { Teardown } from './teardown-first.ts';

/** Whether util-linux's setpriv is on PATH (processes tied to this one by a parent-death signal). */
export const hasSetpriv = (await execa('sh', ['-c', 'command -v setpriv'], { reject: false })).exitCode === 0;

export const hasSyncthing =
  (await execa('sh', ['-c', 'command -v syncthing'], { reject: false })).exitCode === 0;
export const NO_SYNCTHING = 'syncthing is not installed (apt-get install syncthing; .ci/run does it)';

export interface Syncthing {
  /** http://127.0.0.1:PORT of its REST interface. */
  url: string;
  apiKey: string;
  /** Its device ID. */
  id: string;
  /** tcp://127.0.0.1:PORT where it listens for devices. */
  listen: string;
  home: string;
  /** Its process (Syncthing runs as one process here: no monitor). */
  pid: number;
  /** A REST call with its key; the parsed JSON (or text) of a 2xx answer, else it throws. */
  call<T = unknown>(method: string, path: string, body?: unknown): Promise<T>;
  /** Waits until `check` returns something other than undefined or false, polling; throws past `ms`. */
  until<T>(what: string, check: () => Promise<T | undefined | false>, ms?: number): Promise<T>;
  stop(): Promise<void>;
}

/**
 * Writes a Syncthing home whose configuration listens on loopback at `listenPort` and reaches out to
 * nothing; resolves with its device ID.
 */
export async function loopbackSyncthingHome(
  home: string,
  listenPort: number,
  discovery: SyncthingDiscovery = {},
): Promise<string> {
  await execa('syncthing', ['generate', `--home=${home}`, '--no-default-folder', '--skip-port-probing']);
  const configPath = join(home, 'config.xml');
  let config = (await readFile(configPath, 'utf8'))
    .replace(
      /<listenAddress>[^<]*<\/listenAddress>/,
      `<listenAddress>${discovery.listen ?? `tcp://127.0.0.1:${listenPort}`}</listenAddress>`,
    )
    .replace(
      /<(globalAnnounceEnabled|localAnnounceEnabled|relaysEnabled|natEnabled|startBrowser|crashReportingEnabled)>true</g,
      '<$1>false<',
    )
    .replace(/<urAccepted>\d+</, '<urAccepted>-1<')
    .replace(/<autoUpgradeIntervalH>\d+</, '<autoUpgradeIntervalH>0<');
  // Discovery only where a test turns it on, inside namespaces of its own.
  if (discovery.local) config = config.replace(/<localAnnounceEnabled>false</, '<localAnnounceEnabled>true<');
  if (discovery.globalServer) {
    config = config
      .replace(/<globalAnnounceEnabled>false</, '<globalAnnounceEnabled>true<')
      .replace(/<globalAnnounceServer>[^<]*<\/globalAnnounceServer>/g, '')
      .replace(
        /<\/options>/,
        `<globalAnnounceServer>${discovery.globalServer}</globalAnnounceServer></options>`,
      );
  }
  await writeFile(configPath, config);
  return deviceId(new X509Certificate(await readFile(join(home, 'cert.pem'))).raw);
}

/**
 * Polls `check` every 100 ms (or `everyMs`) until it returns something other than undefined or false (a throw counts
 * as not yet); throws naming `what` past `ms`. The bound is generous: it catches hangs, not slowness.
 */
export async function pollUntil<T>(
  what: string,
  check: () => Promise<T | undefined | false>,
  ms = 30_000,
  everyMs = 100,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const result = await check().catch(() => undefined);
    if (result !== undefined && result !== false) return result as T;
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${ms / 1000} s`);
    await sleep(everyMs);
  }
}

/** Where a Syncthing listens, and the discovery it does (none unless asked). */
export interface SyncthingDiscovery {
  /** Its listen address; tcp://127.0.0.1:PORT otherwise. */
  listen?: string;
  local?: boolean;
  /** A global discovery server's URL; global discovery is on when given. */
  globalServer?: string;
}

export interface SyncthingOptions extends SyncthingDiscovery {
  /** A command prefix to run it under, such as `ip netns exec NAME`. */
  prefix?: string[];
  /** The host its REST interface listens on (127.0.0.1 otherwise). */
  guiHost?: string;
}

/** Starts a Syncthing, stopped and its home removed in `t.teardown` whatever the test's outcome. */
export async function startSyncthing(
  t: Teardown,
  name = 'syncthing',
  options: SyncthingOptions = {},
): Promise<Syncthing> {
  const home = await mkdtemp(join(tmpdir(), 'syncd-test-syncthing-'));
  const running: { child?: ChildProcess } = {};
  const stop = async () => {
    const { child } = running;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const forced = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(forced);
    }
    await rm(home, { recursive: true, force: true });
  };
  t.teardown(stop);
  // A test process that exits without running its teardowns still tries to remove the home (one
  // killed by a signal cannot; its Syncthing dies with it, through the parent-death signal).
  const removeHome = () => {
    try {
      rmSync(home, { recursive: true, force: true });
    } catch {
      // Syncthing, still running, wrote into it meanwhile: left in the system's temporary folder.
    }
  };
  process.once('exit', removeHome);
  t.teardown(() => process.off('exit', removeHome));
  const [guiPort, listenPort] = [await getPort({ host: '127.0.0.1' }), await getPort({ host: '127.0.0.1' })];
  const id = await loopbackSyncthingHome(home, listenPort, options);
  const guiHost = options.guiHost ?? '127.0.0.1';
  // Syncthing as one process (STMONITORED: no monitor parent, which would leave its child running when
  // killed), killed by the kernel when this test process dies, however it dies: a test that tap kills
  // for its time leaves no Syncthing behind. setpriv's parent-death signal survives the exec of a
  // prefix such as `ip netns exec`.
  const [command, ...prefixArgs] = [
    ...(hasSetpriv ? ['setpriv', '--pdeathsig', 'KILL'] : []),
    ...(options.prefix ?? []),
    'syncthing',
  ];
  const apiKey = `syncthing-key-${guiPort}`;
  running.child = spawn(
    command as string,
    [
      ...prefixArgs,
      'serve',
      `--home=${home}`,
      '--no-browser',
      '--no-upgrade',
      '--no-restart',
      `--gui-address=http://${guiHost}:${guiPort}`,
      `--gui-apikey=${apiKey}`,
    ],
    { stdio: 'ignore', env: { ...process.env, STNODEFAULTFOLDER: '1', STMONITORED: '1', HOME: home } },
  );
  const url = `http://${guiHost}:${guiPort}`;
  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: { 'X-API-Key': apiKey, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok)
      throw new Error(`Syncthing answered ${method} ${path} with ${response.status}: ${text}`);
    try {
      return JSON.parse(text) as T;
    } catch {
      return text as T;
    }
  };
  const until = <T>(what: string, check: () => Promise<T | undefined | false>, ms?: number) =>
    pollUntil(`${name}: ${what}`, check, ms);
  await until('answering pings', () => call('GET', '/rest/system/ping'), 60_000);
  return {
    url,
    apiKey,
    id,
    listen: options.listen ?? `tcp://127.0.0.1:${listenPort}`,
    home,
    pid: running.child.pid ?? 0,
    call,
    until,
    stop,
  };
}

/** A syncd device and a Syncthing made to know each other (at their addresses) and share a folder. */
export async function shareFolder(options: {
  syncthing: Syncthing;
  device: {
    id: string;
    listen: string;
    call: (method: string, path: string, body?: unknown) => Promise<unknown>;
  };
  folder: string;
  /** The folder's path on each side, and its type there (sendreceive when not given). */
  theirs: string;
  mine: string;
  theirType?: string;
  myType?: string;
}): Promise<void> {
  const { syncthing, device, folder } = options;
  await syncthing.call('POST', '/rest/config/devices', { deviceID: device.id, addresses: [device.listen] });
  await syncthing.call('POST', '/rest/config/folders', {
    id: folder,
    path: options.theirs,
    devices: [{ deviceID: device.id }],
    ...(options.theirType ? { type: options.theirType } : {}),
  });
  await device.call('POST', '/rest/config/devices', {
    deviceID: syncthing.id,
    addresses: [syncthing.listen],
  });
  await device.call('POST', '/rest/config/folders', {
    id: folder,
    path: options.mine,
    devices: [{ deviceID: syncthing.id }],
    ...(options.myType ? { type: options.myType } : {}),
  });
}
