import { statSync } from 'node:fs';
import { homedir } from 'node:os';
import { isatty } from 'node:tty';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { type Address, parseAddress } from './address.ts';
import { parseDuration } from './duration.ts';
import { HELP_WIDTH, wrap } from './help-text.ts';
import { formatSyncUrl, parseSyncUrl } from './sync-url.ts';
import { parseFacilityList } from './debug-facilities.ts';

export interface Settings {
  home: string;
  address: Address;
  /** Undefined when none was given: the home's config.json holds a generated one. */
  apiKey: string | undefined;
  logLevel: LogLevel;
  /** How stdout's log lines look: text for people, JSON lines for collectors. */
  logFormat: LogFormat;
  drainTimeoutMs: number;
  /** More crashes than this within crashWindowMs and the supervisor gives up (exit code 3). */
  crashLimit: number;
  crashWindowMs: number;
  /** A worker not ready this long after it was started is killed and counts as a crash. */
  startupTimeoutMs: number;
  /** A serving worker that answers no heartbeat for this long is killed and counts as a crash. */
  heartbeatTimeoutMs: number;
  /** Shut down when standard input ends: a parent that dies, however, takes the service with it. */
  stopWithStdin: boolean;
  /** Host names accepted besides the loopback ones, for a reverse proxy in front. */
  allowedHosts: string[];
  /** Time a client has to send a request's headers, and the whole request. */
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  /** Connections served at once; more are closed at once. */
  maxConnections: number;
  /** Serve HTTPS; with the certificate and key files given, else a self-signed pair kept in the home. */
  tls: boolean;
  tlsCert: string | undefined;
  tlsKey: string | undefined;
  /** Where the sync protocol listens (tcp://HOST:PORT), over options.listenAddresses; undefined: the configuration's. */
  syncAddress: string | undefined;
  /** Local and global discovery, over options.localAnnounceEnabled and globalAnnounceEnabled; undefined: the configuration's. */
  localAnnounce: boolean | undefined;
  globalAnnounce: boolean | undefined;
  /** Debug facilities on from the start (STTRACE's list; see shared/debug-facilities.ts). */
  trace: string[];
  /** Whether a web GUI is served at /: syncd's own, or the folder of guiAssets. */
  gui: boolean;
  /** An absolute folder whose files are served at / instead of syncd's own GUI (STGUIASSETS). */
  guiAssets: string | undefined;
  /** The settings given by a flag or the environment, as opposed to defaulted. */
  given: ReadonlySet<SettingName>;
}

export const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof logLevels)[number];
export const logFormats = ['text', 'json'] as const;
export type LogFormat = (typeof logFormats)[number];

export const MIN_API_KEY_LENGTH = 16;
// Node's timers hold 32-bit signed milliseconds: a longer duration would fire after 1 ms.
export const MAX_DURATION_MS = 2 ** 31 - 1;

/** A setting that cannot be used; the supervisor exits with code 2 and one line naming it. */
export class SettingError extends Error {
  readonly setting: string;
  constructor(setting: string, problem: string, options?: ErrorOptions) {
    super(`${setting}: ${problem}`, options);
    this.name = 'SettingError';
    this.setting = setting;
  }
}

interface SettingSpec {
  flag: string;
  env: string;
  help: string;
  /** Shown in the help; `undefined` when the default is computed. */
  default?: string;
}

// The table the parser, the error messages and the help text are all made from.
export const settingSpecs = {
  home: {
    flag: 'home',
    env: 'SYNCD_HOME',
    help: 'state folder holding config.json and the bound address (created if missing)',
  },
  address: {
    flag: 'address',
    env: 'SYNCD_ADDRESS',
    help: 'HOST:PORT to listen on; port 0 picks a free port',
    default: '127.0.0.1:8384',
  },
  apiKey: {
    flag: 'api-key',
    env: 'SYNCD_API_KEY',
    help: `API key clients must send (at least ${MIN_API_KEY_LENGTH} characters); generated and stored in config.json when not given`,
  },
  logLevel: {
    flag: 'log-level',
    env: 'SYNCD_LOG_LEVEL',
    help: `one of ${logLevels.join(', ')}`,
    default: 'info',
  },
  logFormat: {
    flag: 'log-format',
    env: 'SYNCD_LOG_FORMAT',
    help: 'text (a line for people, colored at a terminal) or json (a JSON object a line, for log collectors)',
    default: 'text when standard output is a terminal, else json',
  },
  drainTimeout: {
    flag: 'drain-timeout',
    env: 'SYNCD_DRAIN_TIMEOUT',
    help: 'how long a stopping worker may take to finish its requests (500ms, 10s, 1m; bare number = seconds)',
    default: '10s',
  },
  crashLimit: {
    flag: 'crash-limit',
    env: 'SYNCD_CRASH_LIMIT',
    help: 'give up (exit code 3) after more than this many worker crashes within the crash window',
    default: '5',
  },
  crashWindow: {
    flag: 'crash-window',
    env: 'SYNCD_CRASH_WINDOW',
    help: 'the window in which crashes are counted',
    default: '60s',
  },
  startupTimeout: {
    flag: 'startup-timeout',
    env: 'SYNCD_STARTUP_TIMEOUT',
    help: 'a worker not ready this long after its start is killed and counts as a crash',
    default: '10s',
  },
  heartbeatTimeout: {
    flag: 'heartbeat-timeout',
    env: 'SYNCD_HEARTBEAT_TIMEOUT',
    help: 'a serving worker that answers no heartbeat for this long (event loop blocked) is killed and replaced',
    default: '10s',
  },
  stopWithStdin: {
    flag: 'stop-with-stdin',
    env: 'SYNCD_STOP_WITH_STDIN',
    help: 'shut down when standard input ends, so that a parent that dies takes the service with it (1 or 0)',
    default: '0',
  },
  allowedHosts: {
    flag: 'allowed-hosts',
    env: 'SYNCD_ALLOWED_HOSTS',
    help: 'comma-separated host names accepted in the Host header besides localhost, 127.0.0.1 and [::1] (behind a reverse proxy)',
    default: '',
  },
  headersTimeout: {
    flag: 'headers-timeout',
    env: 'SYNCD_HEADERS_TIMEOUT',
    help: 'how long a client may take to send the headers of a request',
    default: '10s',
  },
  requestTimeout: {
    flag: 'request-timeout',
    env: 'SYNCD_REQUEST_TIMEOUT',
    help: 'how long a client may take to send a whole request, body included',
    default: '30s',
  },
  maxConnections: {
    flag: 'max-connections',
    env: 'SYNCD_MAX_CONNECTIONS',
    help: 'connections served at once; more are closed at once',
    default: '1000',
  },
  tls: {
    flag: 'tls',
    env: 'SYNCD_TLS',
    help: 'serve HTTPS (1 or 0; a bare --tls is 1): with --tls-cert and --tls-key, else a self-signed pair generated into the home',
    default: '0',
  },
  tlsCert: {
    flag: 'tls-cert',
    env: 'SYNCD_TLS_CERT',
    help: 'PEM file of the certificate (chain) to serve with; implies --tls 1',
  },
  tlsKey: {
    flag: 'tls-key',
    env: 'SYNCD_TLS_KEY',
    help: 'PEM file of its private key',
  },
  syncAddress: {
    flag: 'sync-address',
    env: 'SYNCD_SYNC_ADDRESS',
    help: "tcp://HOST:PORT where other devices connect (Syncthing's protocol); port 0 picks a free port; overrides options.listenAddresses",
    default: 'options.listenAddresses, at first tcp://0.0.0.0:22000',
  },
  localAnnounce: {
    flag: 'local-announce',
    env: 'SYNCD_LOCAL_ANNOUNCE',
    help: 'local discovery: announce on and listen to the LAN, UDP port 21027 (1 or 0); overrides options.localAnnounceEnabled',
    default: '0',
  },
  globalAnnounce: {
    flag: 'global-announce',
    env: 'SYNCD_GLOBAL_ANNOUNCE',
    help: 'global discovery: announce to and look up on options.globalAnnounceServers (1 or 0); overrides options.globalAnnounceEnabled',
    default: '0',
  },
  trace: {
    flag: 'trace',
    env: 'STTRACE',
    help: "debug lines of these parts of the worker, as Syncthing's STTRACE (connections,discover,main,model,protocol); changed while running through /rest/system/debug",
    default: '',
  },
  gui: {
    flag: 'gui',
    env: 'SYNCD_GUI',
    help: 'serve the web GUI at / (1 or 0); 0: the REST interface only, and only the API key lets in',
    default: '1',
  },
  guiAssets: {
    flag: 'gui-assets',
    env: 'STGUIASSETS',
    help: "a folder of web GUI files served at / instead of syncd's own (Syncthing's GUI, laid out as its gui/ folder, for one)",
  },
} as const satisfies Record<string, SettingSpec>;

export type SettingName = keyof typeof settingSpecs;

/**
 * Reads the settings from flags and the environment; the flag wins. Throws SettingError. `terminal`:
 * whether standard output is a terminal, which chooses the log format when none is given.
 */
export function readSettings(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  terminal: boolean = isatty(1),
): Settings {
  const flags = parseFlags(argv);
  const raw = (name: SettingName): string | undefined => {
    const spec = settingSpecs[name];
    const fromFlag = flags[spec.flag];
    if (fromFlag !== undefined) return fromFlag;
    const fromEnv = env[spec.env];
    return fromEnv === undefined || fromEnv === '' ? undefined : fromEnv;
  };
  // What was given, else the default the table names.
  const value = (name: SettingName): string => raw(name) ?? (settingSpecs[name] as SettingSpec).default ?? '';

  if ((raw('tlsCert') === undefined) !== (raw('tlsKey') === undefined)) {
    const missing = raw('tlsCert') === undefined ? 'tlsCert' : 'tlsKey';
    throw new SettingError(
      settingLabel(missing),
      'the certificate and the key go together: give both or neither',
    );
  }
  // A certificate given means HTTPS is wanted; saying otherwise at the same time is a contradiction.
  const tlsFiles = raw('tlsCert') !== undefined;
  const tls = readSwitch('tls', raw('tls') ?? (tlsFiles ? '1' : (settingSpecs.tls.default as string)));
  if (tlsFiles && !tls) {
    throw new SettingError(
      settingLabel('tls'),
      `is 0 while ${settingLabel('tlsCert')} and ${settingLabel('tlsKey')} are given: drop --tls 0 to serve HTTPS with them, or drop them to serve HTTP`,
    );
  }
  const headersTimeoutMs = readDuration('headersTimeout', value('headersTimeout'));
  const requestTimeoutMs = readDuration('requestTimeout', value('requestTimeout'));
  if (requestTimeoutMs < headersTimeoutMs) {
    throw new SettingError(
      `${settingLabel('requestTimeout')} and ${settingLabel('headersTimeout')}`,
      `the time for a whole request (${value('requestTimeout')}) is shorter than the time for its headers (${value('headersTimeout')}); make the request timeout at least the headers timeout`,
    );
  }
  const gui = readSwitch('gui', value('gui'));
  const guiAssets = readGuiAssets(raw('guiAssets'));
  if (!gui && guiAssets !== undefined) {
    throw new SettingError(
      settingLabel('guiAssets'),
      `is given while ${settingLabel('gui')} is 0: drop --gui 0 to serve the folder, or drop the folder to serve no GUI`,
    );
  }
  const given = new Set(
    (Object.keys(settingSpecs) as SettingName[]).filter((name) => raw(name) !== undefined),
  );
  return {
    home: resolveHome(raw('home'), env),
    address: readAddress(value('address')),
    apiKey: readApiKey(raw('apiKey')),
    logLevel: readChoice('logLevel', logLevels, value('logLevel')),
    logFormat: readChoice('logFormat', logFormats, raw('logFormat') ?? defaultLogFormat(terminal)),
    drainTimeoutMs: readDuration('drainTimeout', value('drainTimeout')),
    crashLimit: readCount('crashLimit', value('crashLimit')),
    crashWindowMs: readDuration('crashWindow', value('crashWindow')),
    startupTimeoutMs: readDuration('startupTimeout', value('startupTimeout')),
    heartbeatTimeoutMs: readDuration('heartbeatTimeout', value('heartbeatTimeout')),
    stopWithStdin: readSwitch('stopWithStdin', value('stopWithStdin')),
    allowedHosts: readHostList(value('allowedHosts')),
    headersTimeoutMs,
    requestTimeoutMs,
    maxConnections: readCount('maxConnections', value('maxConnections'), 1),
    tls,
    tlsCert: raw('tlsCert'),
    tlsKey: raw('tlsKey'),
    syncAddress: readSyncAddress(raw('syncAddress')),
    localAnnounce: optionalSwitch('localAnnounce', raw('localAnnounce')),
    globalAnnounce: optionalSwitch('globalAnnounce', raw('globalAnnounce')),
    trace: parseFacilityList(value('trace')),
    gui,
    guiAssets,
    given,
  };
}

function readGuiAssets(given: string | undefined): string | undefined {
  if (given === undefined) return undefined;
  if (given.trim() === '') {
    throw new SettingError(settingLabel('guiAssets'), 'is empty: give the folder that holds the GUI');
  }
  const folder = resolve(given);
  let isFolder: boolean;
  try {
    isFolder = statSync(folder).isDirectory();
  } catch {
    isFolder = false;
  }
  if (!isFolder) {
    throw new SettingError(
      settingLabel('guiAssets'),
      `${folder} is not a folder: give the folder that holds the GUI's index.html (or its default/ theme folder)`,
    );
  }
  return folder;
}

/** `--address / SYNCD_ADDRESS`, the way errors and the help name a setting. */
export function settingLabel(name: SettingName): string {
  const spec = settingSpecs[name];
  return `--${spec.flag} / ${spec.env}`;
}

/** `syncd serve --help`: the settings are printed, nothing is started. */
export function wantsHelp(argv: readonly string[]): boolean {
  return argv.includes('--help') || argv.includes('-h');
}

export function usage(): string {
  const specs: SettingSpec[] = Object.values(settingSpecs);
  const flagWidth = Math.max(...specs.map((spec) => spec.flag.length + 2));
  const envWidth = Math.max(...specs.map((spec) => spec.env.length));
  const indent = 2 + flagWidth + 2 + envWidth + 2;
  const lines = specs.map((spec) => {
    // An empty default says nothing: it is left out.
    const dflt = spec.default === undefined || spec.default === '' ? '' : ` (default ${spec.default})`;
    const head = `  ${`--${spec.flag}`.padEnd(flagWidth)}  ${spec.env.padEnd(envWidth)}  `;
    return head + wrap(`${spec.help}${dflt}`, HELP_WIDTH - indent).join(`\n${' '.repeat(indent)}`);
  });
  return ['Usage: syncd serve [options]', '', 'Options (flag, environment variable):', ...lines].join('\n');
}

/** The home folder: the one given, else SYNCD_HOME, else the XDG state folder's `syncd`. */
export function resolveHome(given: string | undefined, env: NodeJS.ProcessEnv): string {
  return resolve(given || env[settingSpecs.home.env] || defaultHome(env));
}

function defaultHome(env: NodeJS.ProcessEnv): string {
  const stateHome = env.XDG_STATE_HOME || join(homedir(), '.local', 'state');
  return join(stateHome, 'syncd');
}

// Settings that are 1 or 0, which may also be given bare: `--tls` is `--tls 1`.
const switches: ReadonlySet<string> = new Set([
  settingSpecs.tls.flag,
  settingSpecs.stopWithStdin.flag,
  settingSpecs.localAnnounce.flag,
  settingSpecs.globalAnnounce.flag,
]);

function parseFlags(argv: readonly string[]): Record<string, string | undefined> {
  const options = Object.fromEntries(
    Object.values(settingSpecs).map((spec) => [spec.flag, { type: 'string' as const }]),
  );
  const args = argv.map((arg, at) => {
    const next = argv[at + 1];
    const bare =
      switches.has(arg.slice(2)) && arg.startsWith('--') && (next === undefined || next.startsWith('--'));
    return bare ? `${arg}=1` : arg;
  });
  try {
    const { values } = parseArgs({ args, options, strict: true, allowPositionals: false });
    return values as Record<string, string | undefined>;
  } catch (error) {
    throw new SettingError('command line', (error as Error).message, { cause: error });
  }
}

function readAddress(text: string): Address {
  const parsed = parseAddress(text);
  if (typeof parsed === 'string') throw new SettingError(settingLabel('address'), parsed);
  return parsed;
}

function readSyncAddress(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  const parsed = parseSyncUrl(text);
  if (typeof parsed === 'string') throw new SettingError(settingLabel('syncAddress'), parsed);
  return formatSyncUrl(parsed);
}

function optionalSwitch(name: SettingName, text: string | undefined): boolean | undefined {
  return text === undefined ? undefined : readSwitch(name, text);
}

function readApiKey(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  if (text.length < MIN_API_KEY_LENGTH) {
    throw new SettingError(
      settingLabel('apiKey'),
      `the key has ${text.length} characters; at least ${MIN_API_KEY_LENGTH} are needed`,
    );
  }
  // The key travels in an HTTP header: anything outside visible ASCII could never be sent back.
  if (!/^[\x21-\x7e]+$/.test(text)) {
    throw new SettingError(
      settingLabel('apiKey'),
      'the key may hold only visible ASCII characters, no spaces',
    );
  }
  return text;
}

/** Text for a person at a terminal, JSON lines for whatever else reads standard output. */
export function defaultLogFormat(terminal: boolean = isatty(1)): LogFormat {
  return terminal ? 'text' : 'json';
}

// One of a setting's few words (a log level, a log format).
function readChoice<T extends string>(name: SettingName, choices: readonly T[], text: string): T {
  if ((choices as readonly string[]).includes(text)) return text as T;
  throw new SettingError(settingLabel(name), `"${text}" is not one of ${choices.join(', ')}`);
}

function readDuration(name: SettingName, text: string): number {
  const ms = parseDuration(text);
  if (ms === undefined || ms <= 0) {
    throw new SettingError(
      settingLabel(name),
      `"${text}" is not a positive duration such as 500ms, 10s or 1m`,
    );
  }
  if (ms > MAX_DURATION_MS) {
    throw new SettingError(
      settingLabel(name),
      `"${text}" is longer than the longest duration, 24 days (${MAX_DURATION_MS}ms)`,
    );
  }
  return ms;
}

function readCount(name: SettingName, text: string, minimum = 0): number {
  if (!/^\d+$/.test(text.trim()) || Number(text) < minimum) {
    throw new SettingError(settingLabel(name), `"${text}" is not a whole number of at least ${minimum}`);
  }
  return Number(text);
}

function readHostList(text: string): string[] {
  const hosts = text
    .split(',')
    .map((host) => host.trim().toLowerCase())
    .filter(Boolean);
  for (const host of hosts) {
    if (!/^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)$/.test(host)) {
      throw new SettingError(
        settingLabel('allowedHosts'),
        `"${host}" is not a host name (give names without ports)`,
      );
    }
  }
  return hosts;
}

function readSwitch(name: SettingName, text: string): boolean {
  if (/^(1|true|yes|on)$/i.test(text)) return true;
  if (/^(0|false|no|off)$/i.test(text)) return false;
  throw new SettingError(settingLabel(name), `"${text}" is not 1 or 0`);
}
