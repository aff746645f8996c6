import { parseArgs } from 'node:util';
import { ClientError, SyncdClient } from '../../shared/client/client.ts';
import { parseDuration } from '../../shared/duration.ts';
import { checkHealth } from '../../shared/client/health.ts';
import { connectOutcome, pollUntil } from '../../shared/client/poll.ts';
import { notRecorded, resolveTarget, type Target } from '../../shared/client/target.ts';
import { readDeviceId } from '../../shared/identity.ts';
import { safeLines } from '../../shared/terminal-text.ts';
import { versionInfo } from '../../shared/version.ts';
import {
  type ConfigCommandOptions,
  ConfigRefusal,
  ConfigUsageError,
  devicesCommand,
  foldersCommand,
} from './config-commands.ts';
import { errorsTable, type Print, statusTable, versionsTable } from './format.ts';
import { ignoresCommand } from './ignores-command.ts';
import { needCommand } from './need-command.ts';
import { pendingCommand } from './pending-command.ts';
import { commandHelp, globalHelp } from './usage.ts';
import { watchCommand, type WatchOptions } from './watch-command.ts';

export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

export interface CliIo {
  env: NodeJS.ProcessEnv;
  out(text: string): void;
  err(text: string): void;
  /** Standard input, whole (for `ignores set FOLDER -`). */
  readInput?(): Promise<string>;
}

/** A mistake in how the command was called: exit code 2. */
class UsageError extends Error {}

/** A failure told in terms of how the service was looked for, for a person to act on. */
class TargetError extends Error {}

/** The client's error, with what a person can do about it. */
function explain(error: unknown, target: Target): unknown {
  if (!(error instanceof ClientError)) return error;
  if (error.status === 401) {
    return new TargetError(
      `the service at ${target.address} refused the API key (401): give its key with --api-key KEY or SYNCD_API_KEY, or give --home of the service, whose config.json holds it`,
    );
  }
  // Nothing answering, or something else answering at the default address (Syncthing's own GUI, say).
  if (error.code !== undefined || error.status === 403) {
    return new TargetError(`${error.message}${notRecorded(target)}`);
  }
  return error;
}

interface Options {
  address?: string;
  apiKey?: string;
  home?: string;
  json: boolean;
  wait: boolean;
  tls?: boolean;
  /** healthcheck --sync: the TCP sync listeners too. */
  sync?: boolean;
  timeoutMs: number;
  watch: WatchOptions;
  config: ConfigCommandOptions;
}

/** Runs `syncd ARGS`; resolves with the exit code. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  try {
    const { command, args, options, help, version } = parse(argv);
    if (version && !help && command === undefined) {
      io.out(versionInfo().longVersion);
      return EXIT_OK;
    }
    if (help || command === 'help') {
      io.out(command && commandHelp[command] ? commandHelp[command] : globalHelp);
      return EXIT_OK;
    }
    return await run(command, args, options, io);
  } catch (error) {
    if (error instanceof UsageError || error instanceof ConfigUsageError) {
      io.err(`syncd: ${error.message}\nRun syncd --help for the commands and options.`);
      return EXIT_USAGE;
    }
    // A service's message can quote what a device sent: escaped as the rest.
    if (error instanceof ClientError || error instanceof TargetError || error instanceof ConfigRefusal) {
      io.err(`syncd: ${safeLines(error.message)}`);
      return EXIT_FAILED;
    }
    throw error;
  }
}

function parse(argv: readonly string[]) {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        address: { type: 'string' },
        'api-key': { type: 'string' },
        home: { type: 'string' },
        json: { type: 'boolean', default: false },
        wait: { type: 'boolean', default: false },
        tls: { type: 'boolean' },
        sync: { type: 'boolean' },
        timeout: { type: 'string' },
        name: { type: 'string' },
        'device-address': { type: 'string', multiple: true },
        label: { type: 'string' },
        type: { type: 'string' },
        share: { type: 'string', multiple: true },
        replace: { type: 'boolean' },
        events: { type: 'string' },
        disk: { type: 'boolean' },
        count: { type: 'string' },
        since: { type: 'string' },
        version: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  const [command, ...args] = positionals;
  const timeoutMs = values.timeout === undefined ? undefined : parseDuration(values.timeout);
  if (timeoutMs === 0 || (values.timeout !== undefined && timeoutMs === undefined)) {
    throw new UsageError(
      `--timeout: "${values.timeout}" is not a positive duration such as 500ms, 10s or 1m`,
    );
  }
  if (!values.help && !values.version && command === undefined) throw new UsageError('no command given');
  if (command !== undefined && command !== 'help' && !(command in commandHelp)) {
    throw new UsageError(`unknown command "${command}"`);
  }
  if (values.wait && command !== 'restart' && command !== 'shutdown' && command !== 'reset') {
    throw new UsageError('--wait goes with restart, shutdown and reset only');
  }
  const goesWith = (option: string, forms: string[]) => {
    const form = `${command} ${args[0] ?? ''}`.trim();
    if (
      !forms.some(
        (allowed) => form === allowed || (allowed.endsWith(' *') && command === allowed.slice(0, -2)),
      )
    )
      throw new UsageError(`--${option} goes with ${forms.map((f) => f.replace(/ \*$/, '')).join(', ')}`);
  };
  const given = (name: keyof typeof values) => values[name] !== undefined && values[name] !== false;
  if (given('name')) goesWith('name', ['devices add', 'pending accept']);
  if (given('device-address')) goesWith('device-address', ['devices add']);
  if (given('label')) goesWith('label', ['folders add', 'folders edit']);
  if (given('type')) goesWith('type', ['folders add', 'folders edit', 'pending accept']);
  if (given('share')) goesWith('share', ['folders add']);
  if (given('replace')) goesWith('replace', ['devices add', 'folders add']);
  for (const name of ['events', 'disk', 'count', 'since'] as const)
    if (given(name)) goesWith(name, ['watch']);
  if (given('sync')) goesWith('sync', ['healthcheck']);
  const count = values.count === undefined ? undefined : Number(values.count);
  if (count !== undefined && !(Number.isSafeInteger(count) && count > 0))
    throw new UsageError(`--count: "${values.count}" is not a whole number of events above 0`);
  const since = values.since === undefined ? undefined : Number(values.since);
  if (since !== undefined && !(Number.isSafeInteger(since) && since >= 0))
    throw new UsageError(`--since: "${values.since}" is not an event ID (a whole number)`);
  if (values.disk && values.events !== undefined)
    throw new UsageError('--disk and --events go apart: the disk events are a stream of their own');
  const options: Options = {
    address: values.address,
    apiKey: values['api-key'],
    home: values.home,
    json: values.json,
    wait: values.wait,
    tls: values.tls,
    sync: values.sync,
    timeoutMs: timeoutMs ?? DEFAULT_TIMEOUT_MS,
    watch: {
      types: values.events,
      disk: values.disk === true,
      count,
      since,
      forMs: timeoutMs,
      json: values.json,
    },
    config: {
      name: values.name,
      deviceAddress: values['device-address'],
      label: values.label,
      type: values.type,
      share: values.share,
      replace: values.replace,
    },
  };
  return { command, args, options, help: values.help, version: values.version };
}

async function run(
  command: string | undefined,
  args: string[],
  options: Options,
  io: CliIo,
): Promise<number> {
  const noArgs = () => {
    if (args.length > 0) throw new UsageError(`${command} takes no arguments, got "${args.join(' ')}"`);
  };
  if (command === 'healthcheck') {
    noArgs();
    const { healthy, message } = await checkHealth(io.env, options);
    (healthy ? io.out : io.err)(`${healthy ? 'healthy' : 'unhealthy'}: ${message}`);
    return healthy ? EXIT_OK : EXIT_FAILED;
  }

  const target = await resolveTarget(options, io.env);
  const client = new SyncdClient({
    address: target.url,
    ca: target.ca,
    apiKey: target.apiKey,
    timeoutMs: options.timeoutMs,
  });
  // Text for people holds names other devices chose: escaped, so that none can drive the terminal.
  const safeIo = {
    ...io,
    out: (text: string) => io.out(safeLines(text)),
    err: (text: string) => io.err(safeLines(text)),
  };
  const print: Print = (json, text) => {
    if (options.json || text !== '') safeIo.out(options.json ? JSON.stringify(json) : text);
  };
  try {
    return await runCommand(command, args, options, { client, target, print, noArgs, io: safeIo });
  } catch (error) {
    throw explain(error, target);
  }
}

interface CommandContext {
  client: SyncdClient;
  target: Target;
  print: Print;
  noArgs: () => void;
  io: CliIo;
}

async function runCommand(
  command: string | undefined,
  args: string[],
  options: Options,
  { client, target, print, noArgs, io }: CommandContext,
): Promise<number> {
  switch (command) {
    case 'ping': {
      noArgs();
      const started = performance.now();
      const answer = await client.ping();
      print(answer, `pong from ${target.address} (${Math.round(performance.now() - started)} ms)`);
      return EXIT_OK;
    }
    case 'status': {
      noArgs();
      const status = await client.status();
      print(status, statusTable(status));
      return EXIT_OK;
    }
    case 'restart': {
      noArgs();
      if (!options.wait) {
        print(await client.restart(), `restarting the service at ${target.address}`);
        return EXIT_OK;
      }
      const before = await client.status();
      const started = performance.now();
      const answer = await client.restart();
      const after = await pollUntil(options.timeoutMs, async () => {
        const status = await client.status().catch(() => undefined);
        return status && status.startTime !== before.startTime ? status : undefined;
      });
      if (!after)
        throw new ClientError(
          `the service at ${target.address} did not come back within ${options.timeoutMs}ms`,
          {},
        );
      const waitedMs = Math.round(performance.now() - started);
      // Syncthing reports no pid: then only the time is told.
      const pids = before.pid !== undefined && after.pid !== undefined;
      print(
        { ...answer, waitedMs, ...(pids ? { oldPid: before.pid, newPid: after.pid } : {}) },
        `restarted in ${waitedMs} ms${pids ? `: worker ${before.pid} replaced by ${after.pid}` : ''}`,
      );
      return EXIT_OK;
    }
    case 'shutdown': {
      noArgs();
      const started = performance.now();
      const answer = await client.shutdown();
      if (!options.wait) {
        print(answer, `shutting down the service at ${target.address}`);
        return EXIT_OK;
      }
      const refused = await pollUntil(options.timeoutMs, async () =>
        (await connectOutcome(target.address)) === 'ECONNREFUSED' ? true : undefined,
      );
      if (!refused)
        throw new ClientError(`${target.address} still accepts connections after ${options.timeoutMs}ms`, {});
      const waitedMs = Math.round(performance.now() - started);
      print({ ...answer, waitedMs }, `stopped in ${waitedMs} ms: ${target.address} refuses connections`);
      return EXIT_OK;
    }
    case 'errors':
      return errorsCommand(client, args, print);
    case 'scan': {
      const [folder, ...rest] = args;
      if (rest.length > 0) throw new UsageError(`scan takes at most one FOLDER, got "${args.join(' ')}"`);
      const started = performance.now();
      await client.scan(folder);
      const tookMs = Math.round(performance.now() - started);
      print(
        { ok: 'scanned', folder: folder ?? null, tookMs },
        `scanned ${folder ?? 'every folder'} in ${tookMs} ms`,
      );
      return EXIT_OK;
    }
    case 'reset':
      return resetCommand(client, args, options, print);
    case 'devices':
      await devicesCommand(client, args, options.config, print);
      return EXIT_OK;
    case 'folders':
      await foldersCommand(client, args, options.config, print);
      return EXIT_OK;
    case 'versions':
      return versionsCommand(client, args, print);
    case 'need':
      await needCommand(client, args, print);
      return EXIT_OK;
    case 'pending':
      await pendingCommand(client, args, options.config, print);
      return EXIT_OK;
    case 'ignores':
      await ignoresCommand(client, args, print, io.readInput ?? noInput);
      return EXIT_OK;
    case 'watch':
      noArgs();
      await watchCommand(target, options.watch, io);
      return EXIT_OK;
    case 'id': {
      noArgs();
      // The certificate in the home says it even while the service is stopped.
      const myID = (await readDeviceId(target.home)) ?? (await client.status()).myID;
      print({ myID }, String(myID));
      return EXIT_OK;
    }
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

// The index erased and rebuilt: with --wait, until a new worker serves and the folders are idle again.
async function resetCommand(
  client: SyncdClient,
  args: string[],
  options: Options,
  print: Print,
): Promise<number> {
  const [folder, ...rest] = args;
  if (rest.length > 0) throw new UsageError(`reset takes at most one FOLDER, got "${args.join(' ')}"`);
  const before = options.wait ? await client.status() : undefined;
  const started = performance.now();
  const answer = await client.reset(folder);
  if (!before) {
    print(answer, `${answer.ok}: a new worker rebuilds the index`);
    return EXIT_OK;
  }
  const rebuilt = await pollUntil(options.timeoutMs, async () => {
    const status = await client.status().catch(() => undefined);
    if (!status || status.startTime === before.startTime) return undefined;
    const ids = folder === undefined ? (await client.folders()).map((f) => f.id) : [folder];
    const states = await Promise.all(
      ids.map((id) =>
        client.folderStatus(id).then(
          (s) => s.state,
          () => 'unknown',
        ),
      ),
    );
    return states.every((state) => state === 'idle' || state === 'paused') ? states : undefined;
  });
  if (!rebuilt) {
    throw new ClientError(
      `the index was not rebuilt within ${options.timeoutMs}ms (give a longer --timeout)`,
      {},
    );
  }
  const waitedMs = Math.round(performance.now() - started);
  print({ ...answer, waitedMs }, `${folder ?? 'every folder'} indexed anew in ${waitedMs} ms`);
  return EXIT_OK;
}

// A folder's versions listed, or one file restored to a version (the newest when no time is given).
async function versionsCommand(client: SyncdClient, args: string[], print: Print): Promise<number> {
  const [folder, sub, name, time, ...rest] = args;
  if (folder === undefined) throw new UsageError('versions needs the FOLDER whose versions to list');
  if (sub === undefined) {
    const versions = await client.versions(folder);
    print(versions, versionsTable(versions));
    return EXIT_OK;
  }
  if (sub !== 'restore' || name === undefined || rest.length > 0) {
    throw new UsageError(`versions takes FOLDER, or FOLDER restore NAME [TIME], not "${args.join(' ')}"`);
  }
  let versionTime = time;
  if (versionTime === undefined) {
    const kept = (await client.versions(folder))[name] ?? [];
    const newest = kept
      .map((version) => version.versionTime)
      .sort((a, b) => Date.parse(b) - Date.parse(a))[0];
    if (newest === undefined) throw new ClientError(`folder ${folder} keeps no version of ${name}`, {});
    versionTime = newest;
  }
  const failures = await client.restoreVersions(folder, { [name]: versionTime });
  const failure = failures[name];
  if (failure !== undefined)
    throw new ClientError(`${name} was not restored: ${failure}`, { body: failures });
  print({ restored: name, versionTime }, `${name} restored to its version of ${versionTime}`);
  return EXIT_OK;
}

async function errorsCommand(client: SyncdClient, args: string[], print: Print): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === undefined) {
    const errors = await client.errors();
    print({ errors }, errorsTable(errors));
  } else if (sub === 'clear' && rest.length === 0) {
    print(await client.clearErrors(), 'recent errors cleared');
  } else if (sub === 'add' && rest.join(' ').trim() !== '') {
    print(await client.addError(rest.join(' ')), 'error recorded');
  } else if (sub === 'add') {
    throw new UsageError('errors add needs the MESSAGE to record');
  } else {
    throw new UsageError(`errors takes nothing, "clear" or "add MESSAGE", not "${args.join(' ')}"`);
  }
  return EXIT_OK;
}

const DEFAULT_TIMEOUT_MS = 10_000;

async function noInput(): Promise<string> {
  throw new UsageError('- reads standard input, and this caller gives none');
}
