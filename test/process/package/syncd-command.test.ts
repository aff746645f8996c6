import { execa } from 'execa';
import getPort from 'get-port';
import t from 'tap';
import { syncthing } from '../../../scripts/bench/targets.ts';
import { runCli } from '../../../scripts/cli/run.ts';
import { call, type Service, startService, syncdBin, tryConnect, waitFor } from '../../helpers/service.ts';
import { newDeviceId } from '../../helpers/config.ts';

const hasSyncthing = (await execa('sh', ['-c', 'command -v syncthing'], { reject: false })).exitCode === 0;
const noSyncthing = hasSyncthing ? false : 'syncthing is not installed (.ci/run installs it from Debian)';

/**
 * Runs `syncd ARGS` with only the environment given, in this process: what the command does is tested
 * here, and that the built `syncd` runs it at the end of this file.
 */
async function syncd(args: string[], env: Record<string, string> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(args, {
    env: { SYNCD_ADDRESS: '', SYNCD_API_KEY: '', SYNCD_HOME: '/nonexistent-home', ...env },
    out: (text) => out.push(text),
    err: (text) => err.push(text),
  });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

// One service for the tests that leave it as they found it (each starts at ~1 CPU-second); those that
// restart, stop or need another setting start their own.
let shared: Promise<Service> | undefined;
const sharedService = () => (shared ??= startService(t));

t.test(
  'ping, status and errors for people and as JSON, with address and key from the environment',
  async (t) => {
    const service = await sharedService();
    const env = { SYNCD_ADDRESS: service.address, SYNCD_API_KEY: service.apiKey };

    const ping = await syncd(['ping'], env);
    t.equal(ping.code, 0, ping.err);
    t.match(ping.out, new RegExp(`^pong from ${service.address} \\(\\d+ ms\\)$`));
    t.same(JSON.parse((await syncd(['ping', '--json'], env)).out), { ping: 'pong' });

    const status = await syncd(['status'], env);
    const workerPid = await service.workerPid();
    t.match(
      status.out,
      new RegExp(
        `^worker +pid ${workerPid}, up \\d+ s, since \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d$`,
        'm',
      ),
    );
    t.match(status.out, /^supervisor +pid \d+, since .*, 0 restarts, 0 crashes$/m);
    // The harness listens for devices at tcp://127.0.0.1:0: the port it got.
    t.match(
      status.out,
      /^sync +tcp:\/\/127\.0\.0\.1:[1-9]\d* \(tcp:\/\/127\.0\.0\.1:0\)$/m,
      'where devices reach it',
    );
    t.equal(JSON.parse((await syncd(['status', '--json'], env)).out).pid, workerPid);

    t.equal((await syncd(['errors'], env)).out, 'no recent errors');
    t.equal((await syncd(['errors', 'add', 'disk', 'on', 'fire'], env)).out, 'error recorded');
    const listed = await syncd(['errors'], env);
    t.match(
      listed.out,
      /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d {2}\d+ s ago +error +disk on fire$/,
      'local time, age, level, message',
    );
    const json = JSON.parse((await syncd(['errors', '--json'], env)).out);
    t.equal(json.errors[0].message, 'disk on fire');
    t.equal((await syncd(['errors', 'clear'], env)).out, 'recent errors cleared');
    t.same((await call(service, 'GET', '/rest/system/error')).body, { errors: [] }, 'cleared on the service');
  },
);

t.test('with nothing given, syncd finds the service through its home', async (t) => {
  const service = await startService(t, { env: { SYNCD_API_KEY: '' } });
  const result = await syncd(['ping'], { SYNCD_HOME: service.home });
  t.equal(result.code, 0, result.err);
  t.match(result.out, `pong from ${service.address}`);
});

t.test('flags win over the environment', async (t) => {
  const service = await sharedService();
  const result = await syncd(['ping', '--address', service.address, '--api-key', service.apiKey], {
    SYNCD_ADDRESS: '127.0.0.1:1',
    SYNCD_API_KEY: 'wrong-key-wrong-key',
  });
  t.equal(result.code, 0, result.err);
});

t.test('restart --wait returns once the new worker answers, and says how long it took', async (t) => {
  const service = await startService(t);
  const env = { SYNCD_ADDRESS: service.address, SYNCD_API_KEY: service.apiKey };
  const before = await service.workerPid();
  const result = await syncd(['restart', '--wait'], env);
  t.equal(result.code, 0, result.err);
  const after = await service.workerPid();
  t.not(after, before);
  t.match(result.out, new RegExp(`^restarted in \\d+ ms: worker ${before} replaced by ${after}$`));
  const json = JSON.parse((await syncd(['restart', '--wait', '--json'], env)).out);
  t.match(json, { ok: 'restarting', waitedMs: Number, oldPid: after, newPid: Number });
});

t.test('shutdown --wait returns once the port refuses', async (t) => {
  const service = await startService(t);
  const result = await syncd(['shutdown', '--wait'], {
    SYNCD_ADDRESS: service.address,
    SYNCD_API_KEY: service.apiKey,
  });
  t.equal(result.code, 0, result.err);
  t.match(result.out, new RegExp(`^stopped in \\d+ ms: ${service.address} refuses connections$`));
  t.equal(await tryConnect(service.address), 'ECONNREFUSED');
  t.equal((await service.exited).exitCode, 0);
});

t.test('a stopped service: exit 1 and a message naming the address', async (t) => {
  const port = await getPort({ host: '127.0.0.1' });
  for (const command of [['ping'], ['status'], ['restart'], ['errors'], ['shutdown', '--wait']]) {
    const result = await syncd(command, {
      SYNCD_ADDRESS: `127.0.0.1:${port}`,
      SYNCD_API_KEY: 'x'.repeat(20),
    });
    t.equal(result.code, 1, command.join(' '));
    t.match(result.err, new RegExp(`^syncd: no service answering at 127.0.0.1:${port}: connection refused`));
  }
});

t.test('a wrong key: exit 1, the service says 401, and the action is not taken', async (t) => {
  const service = await sharedService();
  const pid = await service.workerPid();
  const result = await syncd(['restart'], {
    SYNCD_ADDRESS: service.address,
    SYNCD_API_KEY: 'wrong-key-wrong-key',
  });
  t.equal(result.code, 1);
  t.match(
    result.err,
    new RegExp(
      `^syncd: the service at ${service.address} refused the API key \\(401\\): give its key with --api-key KEY or SYNCD_API_KEY, or give --home`,
    ),
    'a person is told what to pass, not which header to send',
  );
  t.equal(await service.workerPid(), pid);
});

t.test(
  'with no address anywhere, the message says which home was read and that it records no service',
  async (t) => {
    const home = t.testdir();
    const result = await syncd(['ping', '--timeout', '2s'], {
      SYNCD_HOME: home,
      SYNCD_API_KEY: 'x'.repeat(20),
    });
    t.equal(result.code, 1);
    t.match(
      result.err,
      `no service is recorded in the home ${home}: it has no address file; give --address, or --home of the service`,
    );
    const health = await syncd(['healthcheck'], { SYNCD_HOME: home, SYNCD_API_KEY: 'x'.repeat(20) });
    t.match(health.err, `no service is recorded in the home ${home}`);
  },
);

t.test(
  'status and restart --wait against Syncthing say what Syncthing reports, and no "undefined"',
  { skip: noSyncthing },
  async (t) => {
    const running = await syncthing.start();
    t.teardown(running.stop);
    const env = { SYNCD_ADDRESS: running.url.replace('http://', ''), SYNCD_API_KEY: running.apiKey };
    await waitFor(
      'Syncthing to answer',
      async () => ((await syncd(['ping'], env)).code === 0 ? true : undefined),
      20_000,
    );
    const status = await syncd(['status'], env);
    t.equal(status.code, 0, status.err);
    t.match(status.out, /^service +device [A-Z0-9-]{63}, up \d+ s, since \d{4}-/m);
    t.notMatch(status.out, /undefined/);
    const restart = await syncd(['restart', '--wait', '--timeout', '30s'], env);
    t.equal(restart.code, 0, restart.err);
    t.match(restart.out, /^restarted in \d+ ms$/);
  },
);

t.test('devices and folders: list, add, pause, resume, remove, for people and as JSON', async (t) => {
  const service = await sharedService();
  const env = { SYNCD_ADDRESS: service.address, SYNCD_API_KEY: service.apiKey };
  const myID = (await call(service, 'GET', '/rest/system/status')).body.myID as string;
  const other = newDeviceId();

  const listed = await syncd(['devices'], env);
  t.equal(listed.code, 0, listed.err);
  t.match(listed.out, `${myID}`);
  t.match(listed.out, '(this device)');
  const added = await syncd(
    ['devices', 'add', other, '--name', 'laptop', '--device-address', 'tcp://192.0.2.1:22000'],
    env,
  );
  t.equal(added.code, 0, added.err);
  const devices = JSON.parse((await syncd(['devices', '--json'], env)).out);
  t.match(
    devices.find((d: { deviceID: string }) => d.deviceID === other),
    { name: 'laptop', addresses: ['tcp://192.0.2.1:22000'], paused: false },
  );
  t.equal((await syncd(['devices', 'pause', other], env)).code, 0);
  t.match((await syncd(['devices'], env)).out, new RegExp(`${other}.*\\(paused\\)`));
  t.equal((await syncd(['devices', 'resume'], env)).code, 0);
  t.notMatch((await syncd(['devices'], env)).out, 'paused');

  const folder = t.testdir();
  const addedFolder = await syncd(
    ['folders', 'add', 'docs', folder, '--label', 'Docs', '--share', other],
    env,
  );
  t.equal(addedFolder.code, 0, addedFolder.err);
  t.match(
    (await syncd(['folders'], env)).out,
    `docs ("Docs")  ${folder}  sendreceive  shared with 1 device  `,
  );
  const scanned = await syncd(['scan', 'docs'], env);
  t.match([scanned.code, scanned.out], [0, /^scanned docs in \d+ ms$/]);
  t.match((await syncd(['folders'], env)).out, /idle, 0 files, 0 directories, 0 B/, 'its state and counts');
  t.match((await syncd(['scan', 'nope'], env)).err, /answered 404: no such folder/);
  t.equal((await syncd(['folders', 'pause', 'docs'], env)).code, 0);
  t.match(JSON.parse((await syncd(['folders', '--json'], env)).out)[0], {
    id: 'docs',
    label: 'Docs',
    paused: true,
  });
  t.equal((await syncd(['folders', 'resume', 'docs'], env)).code, 0);

  // An ID configured already is not replaced unless asked: exit 1, nothing changed.
  const again = await syncd(['folders', 'add', 'docs', folder], env);
  t.match([again.code, again.err], [1, /folder docs is configured already, at .*: give --replace/]);
  t.match(JSON.parse((await syncd(['folders', '--json'], env)).out)[0], { label: 'Docs', devices: [{}, {}] });
  const replaced = await syncd(
    ['folders', 'add', 'docs', folder, '--label', 'Docs', '--share', other, '--replace'],
    env,
  );
  t.match([replaced.code, replaced.out], [0, `folder docs replaced at ${folder}`]);
  const deviceAgain = await syncd(['devices', 'add', other], env);
  t.match(
    [deviceAgain.code, deviceAgain.err],
    [1, /device .* is configured already \(laptop\): give --replace/],
  );
  // The service's refusals: exit 1 with its message; nothing changed.
  const relative = await syncd(['folders', 'add', 'x', 'relative'], env);
  t.equal(relative.code, 1);
  t.match(relative.err, /answered 400: folders\[\d\]\.path: "relative" is relative/);
  const own = await syncd(['devices', 'pause', myID], env);
  t.match([own.code, own.err], [1, /is this device: it cannot be paused/]);
  const bogus = await syncd(['devices', 'pause', 'bogus'], env);
  t.equal(bogus.code, 1);
  t.match(bogus.err, /"bogus" is not a device ID/);
  const unknown = await syncd(['folders', 'remove', 'nope'], env);
  t.match([unknown.code, unknown.err], [1, /answered 404: no folder with ID "nope"/]);
  t.same(
    ((await call(service, 'GET', '/rest/config/folders')).body as Array<{ id: string }>).map((f) => f.id),
    ['docs'],
  );

  t.equal((await syncd(['folders', 'remove', 'docs'], env)).code, 0);
  t.equal((await syncd(['devices', 'remove', other], env)).code, 0);
  t.equal((await syncd(['folders'], env)).out, 'no folders');
  // Usage mistakes: exit 2.
  for (const args of [
    ['devices', 'add'],
    ['folders', 'add', 'x'],
    ['devices', 'frobnicate'],
    ['ping', '--name', 'x'],
  ]) {
    t.equal((await syncd(args, env)).code, 2, args.join(' '));
  }
});

t.test('bad usage: exit 2 and what was wrong', async (t) => {
  const cases: Array<[string[], RegExp]> = [
    [[], /no command given/],
    [['launch'], /unknown command "launch"/],
    [['ping', '--wait'], /--wait goes with restart, shutdown and reset only/],
    [['ping', 'extra'], /ping takes no arguments/],
    [['errors', 'delete'], /errors takes nothing, "clear" or "add MESSAGE"/],
    [['errors', 'add'], /errors add needs the MESSAGE/],
    [['ping', '--colour'], /Unknown option '--colour'/],
    [['ping', '--timeout', 'soon'], /--timeout: "soon" is not a positive duration/],
    [['ping', '--replace'], /--replace goes with devices add, folders add/],
  ];
  for (const [args, message] of cases) {
    const result = await syncd(args);
    t.equal(result.code, 2, args.join(' '));
    t.match(result.err, message);
    t.match(result.err, /Run syncd --help/);
  }
});

t.test('--help on every command', async (t) => {
  const general = await syncd(['--help']);
  t.equal(general.code, 0);
  t.match(general.out, /^Usage: syncd COMMAND/);
  for (const command of ['ping', 'restart', 'shutdown', 'errors', 'status', 'healthcheck']) {
    const result = await syncd([command, '--help']);
    t.equal(result.code, 0, command);
    t.match(result.out, new RegExp(`^syncd ${command}`));
  }
  const version = await syncd(['--version']);
  t.match([version.code, version.out], [0, /^syncd v\d+\.\d+\.\d+\S* \(node v\d+/]);
});

t.test('healthcheck: 0 when it answers, 1 when not', async (t) => {
  const service = await sharedService();
  const healthy = await syncd(['healthcheck', '--address', service.address, '--api-key', service.apiKey]);
  t.equal(healthy.code, 0);
  t.match(healthy.out, /^healthy: pong from/);
  const sync = await syncd([
    'healthcheck',
    '--sync',
    '--address',
    service.address,
    '--api-key',
    service.apiKey,
  ]);
  t.match([sync.code, sync.out], [0, /^healthy: pong from .*; listening for devices at tcp:/]);
  t.equal((await syncd(['ping', '--sync'])).code, 2, '--sync goes with healthcheck only');
  const port = await getPort({ host: '127.0.0.1' });
  const unhealthy = await syncd([
    'healthcheck',
    '--address',
    `127.0.0.1:${port}`,
    '--api-key',
    service.apiKey,
  ]);
  t.equal(unhealthy.code, 1);
  t.match(unhealthy.err, /^unhealthy: no service answering/);
});

t.test('the built syncd runs the commands, and serve --help lists the settings', async (t) => {
  const service = await sharedService();
  const ping = await execa(
    'node',
    [syncdBin, 'ping', '--address', service.address, '--api-key', service.apiKey],
    {
      reject: false,
    },
  );
  t.equal(ping.exitCode, 0, ping.stderr);
  t.match(ping.stdout, `pong from ${service.address}`);
  const usage = await execa('node', [syncdBin, 'bogus'], { reject: false });
  t.equal(usage.exitCode, 2);
  t.match(usage.stderr, /unknown command "bogus"[\s\S]*Run syncd --help/);
  const serve = await execa('node', [syncdBin, 'serve', '--help'], { reject: false });
  t.equal(serve.exitCode, 0);
  t.match(serve.stdout, /Usage: syncd serve[\s\S]*--drain-timeout/);
});
