import { formatAddress } from '../shared/address.ts';
import { allowedHostsFor } from '../shared/hosts.ts';
import { prepareHome, removeAddressFiles, resolveApiKey, writeAddressFiles } from '../shared/home.ts';
import { fingerprint, loadTls } from '../shared/tls.ts';
import { createLogger } from '../shared/logger.ts';
import { readSettings, SettingError, usage } from '../shared/settings.ts';
import { bindListener } from './listener.ts';
import { EXIT_BAD_CONFIG, EXIT_OK, EXIT_UNEXPECTED, Supervisor } from './supervisor.ts';

type SignalSource = Pick<NodeJS.Process, 'on' | 'off'>;

/** The supervisor process from its command line: --help, or serve; resolves with the exit code. */
export async function supervisorMain(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${usage()}\n`);
    return EXIT_OK;
  }
  try {
    return await runSupervisor(argv, env);
  } catch (error) {
    process.stderr.write(`syncd supervisor: unexpected failure: ${(error as Error).stack ?? error}\n`);
    return EXIT_UNEXPECTED;
  }
}

/**
 * Reads the settings, prepares the home, binds the address and supervises workers until shutdown.
 * Resolves with the exit code: 0 shutdown, 2 bad configuration, 3 gave up after crashes.
 */
export async function runSupervisor(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  signals: SignalSource = process,
): Promise<number> {
  let logger = createLogger('supervisor', 'info');
  let prepared: Awaited<ReturnType<typeof prepare>>;
  try {
    const settings = readSettings(argv, env);
    logger = createLogger('supervisor', settings.logLevel);
    prepared = await prepare(settings);
  } catch (error) {
    if (!(error instanceof SettingError)) throw error;
    logger.fatal({ setting: error.setting }, error.message);
    return EXIT_BAD_CONFIG;
  }

  const { settings, apiKey, keySource, listener, address, url, tls } = prepared;
  const tlsFields = tls ? { tls: tls.source, fingerprint: fingerprint(tls.cert) } : {};
  logger.info({ address, url, home: settings.home, apiKey: keySource, ...tlsFields }, 'supervisor started');
  const allowedHosts = allowedHostsFor(prepared.bound, settings.allowedHosts);
  const supervisor = new Supervisor({
    settings,
    apiKey,
    listener,
    address,
    logger,
    allowedHosts,
    tls: tls ? { cert: tls.cert, key: tls.key } : null,
  });

  const onStop = (signal: NodeJS.Signals) => {
    if (supervisor.state === 'stopping') supervisor.forceStop(`second ${signal}`);
    else supervisor.shutdown(signal);
  };
  const onHangUp = () => supervisor.restart('SIGHUP');
  signals.on('SIGTERM', onStop);
  signals.on('SIGINT', onStop);
  signals.on('SIGHUP', onHangUp);
  if (settings.stopWithStdin) {
    process.stdin.once('end', () => supervisor.shutdown('standard input closed'));
    process.stdin.resume();
  }
  supervisor.start();
  const code = await supervisor.done;
  signals.off('SIGTERM', onStop);
  signals.off('SIGINT', onStop);
  signals.off('SIGHUP', onHangUp);
  await removeAddressFiles(settings.home);
  if (settings.stopWithStdin) process.stdin.pause();
  return code;
}

async function prepare(settings: ReturnType<typeof readSettings>) {
  await prepareHome(settings.home);
  const { apiKey, source } = await resolveApiKey(settings.home, settings.apiKey);
  const tls = settings.tls
    ? await loadTls(settings.home, { cert: settings.tlsCert, key: settings.tlsKey })
    : undefined;
  const listener = await bindListener(settings.address);
  const { server, bound } = listener;
  const address = formatAddress(bound);
  const url = `${tls ? 'https' : 'http'}://${address}`;
  try {
    await writeAddressFiles(settings.home, address, url);
  } catch (error) {
    server.close();
    throw error;
  }
  return { settings, apiKey, keySource: source, listener, address, url, bound, tls };
}
