import { join } from 'node:path';
import t from 'tap';
import { readSettings, SettingError, usage } from '../../shared/settings.ts';

t.test('defaults', async (t) => {
  const settings = readSettings([], { HOME: '/home/u' });
  t.same(settings.address, { host: '127.0.0.1', port: 8384 });
  t.equal(settings.apiKey, undefined);
  t.equal(settings.logLevel, 'info');
  t.equal(settings.drainTimeoutMs, 10_000);
  t.equal(settings.crashLimit, 5);
  t.equal(settings.crashWindowMs, 60_000);
  t.match(settings.home, /\/\.local\/state\/syncd$/);
});

t.test('the home follows XDG_STATE_HOME when set', async (t) => {
  t.equal(readSettings([], { XDG_STATE_HOME: '/state' }).home, join('/state', 'syncd'));
});

t.test('every setting comes from its environment variable, and the flag wins', async (t) => {
  const env = {
    SYNCD_HOME: '/from/env',
    SYNCD_ADDRESS: '[::1]:9000',
    SYNCD_API_KEY: 'env-key-0123456789abcdef',
    SYNCD_LOG_LEVEL: 'warn',
    SYNCD_DRAIN_TIMEOUT: '2s',
  };
  const fromEnv = readSettings([], env);
  t.equal(fromEnv.home, '/from/env');
  t.same(fromEnv.address, { host: '::1', port: 9000 });
  t.equal(fromEnv.apiKey, 'env-key-0123456789abcdef');
  t.equal(fromEnv.logLevel, 'warn');
  t.equal(fromEnv.drainTimeoutMs, 2000);

  const fromFlags = readSettings(
    [
      '--home',
      '/from/flag',
      '--address=0.0.0.0:0',
      '--api-key',
      'flag-key-0123456789abcdef',
      '--log-level',
      'debug',
      '--drain-timeout',
      '250ms',
    ],
    env,
  );
  t.equal(fromFlags.home, '/from/flag');
  t.same(fromFlags.address, { host: '0.0.0.0', port: 0 });
  t.equal(fromFlags.apiKey, 'flag-key-0123456789abcdef');
  t.equal(fromFlags.logLevel, 'debug');
  t.equal(fromFlags.drainTimeoutMs, 250);
});

t.test('bad settings are refused with the setting named', async (t) => {
  const cases: Array<[string[], Record<string, string>, RegExp]> = [
    [['--address', 'localhost'], {}, /--address \/ SYNCD_ADDRESS: "localhost" is not HOST:PORT/],
    [['--address', '127.0.0.1:70000'], {}, /--address \/ SYNCD_ADDRESS: port 70000 is above 65535/],
    [[], { SYNCD_ADDRESS: ':8384' }, /SYNCD_ADDRESS/],
    [['--api-key', 'short'], {}, /--api-key \/ SYNCD_API_KEY: the key has 5 characters; at least 16/],
    [['--api-key', 'has a space in it ok'], {}, /visible ASCII/],
    [[], { SYNCD_LOG_LEVEL: 'loud' }, /--log-level \/ SYNCD_LOG_LEVEL: "loud" is not one of/],
    [
      ['--drain-timeout', 'soon'],
      {},
      /--drain-timeout \/ SYNCD_DRAIN_TIMEOUT: "soon" is not a positive duration/,
    ],
    [['--drain-timeout', '0'], {}, /positive duration/],
    [['--crash-limit=-1'], {}, /--crash-limit \/ SYNCD_CRASH_LIMIT: "-1" is not a whole number/],
    [['--bogus'], {}, /command line: Unknown option '--bogus'/],
    [['stray'], {}, /command line/],
  ];
  for (const [argv, env, message] of cases) {
    t.throws(
      () => readSettings(argv, env),
      { name: 'SettingError', message },
      `${argv.join(' ')} ${JSON.stringify(env)}`,
    );
  }
  t.type(new SettingError('x', 'y'), Error);
});

t.test('the log format: text at a terminal, JSON elsewhere, unless one is given', async (t) => {
  t.equal(readSettings([], {}, true).logFormat, 'text', 'a terminal: lines for people');
  t.equal(readSettings([], {}, false).logFormat, 'json', 'a pipe or a file: JSON lines');
  t.equal(readSettings([], { SYNCD_LOG_FORMAT: 'json' }, true).logFormat, 'json');
  t.equal(readSettings(['--log-format', 'text'], { SYNCD_LOG_FORMAT: 'json' }, false).logFormat, 'text');
  t.throws(() => readSettings(['--log-format', 'pretty'], {}), {
    name: 'SettingError',
    message: '--log-format / SYNCD_LOG_FORMAT: "pretty" is not one of text, json',
  });
  t.match(usage(), /--log-format +SYNCD_LOG_FORMAT +text .*\(default text when standard output is a/s);
});

t.test('an empty environment variable counts as unset', async (t) => {
  t.same(readSettings([], { SYNCD_ADDRESS: '' }).address, { host: '127.0.0.1', port: 8384 });
});

t.test('the security settings: allowed hosts, time and connection bounds, TLS', async (t) => {
  const settings = readSettings(
    [
      '--allowed-hosts',
      ' Sync.Example , [::1] ',
      '--headers-timeout',
      '2s',
      '--max-connections',
      '50',
      '--tls',
      'yes',
    ],
    { SYNCD_REQUEST_TIMEOUT: '45s', SYNCD_TLS_CERT: '/c.pem', SYNCD_TLS_KEY: '/k.pem' },
  );
  t.same(settings.allowedHosts, ['sync.example', '[::1]']);
  t.same([settings.headersTimeoutMs, settings.requestTimeoutMs, settings.maxConnections], [2000, 45_000, 50]);
  t.same([settings.tls, settings.tlsCert, settings.tlsKey], [true, '/c.pem', '/k.pem']);
  const defaults = readSettings([], {});
  t.same(
    [
      defaults.allowedHosts,
      defaults.headersTimeoutMs,
      defaults.requestTimeoutMs,
      defaults.maxConnections,
      defaults.tls,
    ],
    [[], 10_000, 30_000, 1000, false],
  );

  const bad: Array<[string[], RegExp]> = [
    [
      ['--allowed-hosts', 'evil.test:8384'],
      /--allowed-hosts \/ SYNCD_ALLOWED_HOSTS: "evil.test:8384" is not a host name/,
    ],
    [
      ['--max-connections', '0'],
      /--max-connections \/ SYNCD_MAX_CONNECTIONS: "0" is not a whole number of at least 1/,
    ],
    [['--tls', 'maybe'], /--tls \/ SYNCD_TLS: "maybe" is not 1 or 0/],
    [['--tls-cert', '/c.pem'], /--tls-key \/ SYNCD_TLS_KEY: the certificate and the key go together/],
  ];
  for (const [argv, message] of bad)
    t.throws(() => readSettings(argv, {}), { name: 'SettingError', message }, argv.join(' '));
});

t.test('settings that cannot work together or at all are refused, naming them', async (t) => {
  t.throws(() => readSettings(['--request-timeout', '5s', '--headers-timeout', '10s'], {}), {
    name: 'SettingError',
    message:
      /--request-timeout \/ SYNCD_REQUEST_TIMEOUT and --headers-timeout \/ SYNCD_HEADERS_TIMEOUT: .*shorter/,
  });
  t.equal(
    readSettings(['--request-timeout', '10s', '--headers-timeout', '10s'], {}).requestTimeoutMs,
    10_000,
  );
  // Past 2^31 - 1 ms, Node's timers fire after 1 ms: a huge drain timeout would cut every request at once.
  t.equal(readSettings(['--drain-timeout', '30m'], {}).drainTimeoutMs, 1_800_000, '30 minutes is fine');
  t.throws(() => readSettings(['--drain-timeout', `${2 ** 31}ms`], {}), {
    message: /--drain-timeout \/ SYNCD_DRAIN_TIMEOUT: .*longest duration, 24 days/,
  });
  t.equal(readSettings(['--drain-timeout', `${2 ** 31 - 1}ms`], {}).drainTimeoutMs, 2 ** 31 - 1);
});

t.test('--tls is a switch, and a certificate and key given mean TLS', async (t) => {
  t.equal(readSettings(['--tls'], {}).tls, true, 'a bare --tls');
  t.equal(readSettings(['--tls', '--log-level', 'warn'], {}).tls, true, 'a bare --tls before another flag');
  t.equal(readSettings(['--tls', '0'], {}).tls, false);
  t.equal(readSettings(['--stop-with-stdin'], {}).stopWithStdin, true);
  const files = ['--tls-cert', '/c.pem', '--tls-key', '/k.pem'];
  t.equal(readSettings(files, {}).tls, true, 'a certificate and key turn TLS on');
  t.throws(() => readSettings([...files, '--tls', '0'], {}), { message: /--tls \/ SYNCD_TLS: is 0 while/ });
});

t.test('the settings given are told apart from the defaults', async (t) => {
  const settings = readSettings(['--max-connections', '10'], { SYNCD_LOG_LEVEL: 'warn', SYNCD_TLS: '' });
  t.same([...settings.given].sort(), ['logLevel', 'maxConnections']);
});

t.test('Syncthing’s STTRACE and STGUIASSETS, and their flags', async (t) => {
  const dir = t.testdir({ gui: { default: { 'index.html': '' } } });
  const env = { STTRACE: 'model, protocol', STGUIASSETS: join(dir, 'gui') };
  const settings = readSettings([], env);
  t.same(settings.trace, ['model', 'protocol']);
  t.equal(settings.guiAssets, join(dir, 'gui'));
  t.same(readSettings(['--trace', 'main'], env).trace, ['main'], 'the flag wins');
  t.same(readSettings([], {}).trace, []);
  t.equal(readSettings([], {}).guiAssets, undefined);
  t.throws(() => readSettings(['--gui-assets', join(dir, 'nowhere')], {}), {
    name: 'SettingError',
    message: /^--gui-assets \/ STGUIASSETS: .*nowhere is not a folder/,
  });
});

t.test('--gui: the web GUI on by default, off with 0, and no folder to serve while off', async (t) => {
  const dir = t.testdir({ gui: { 'index.html': '' } });
  t.equal(readSettings([], {}).gui, true);
  t.equal(readSettings(['--gui', '0'], {}).gui, false);
  t.equal(readSettings([], { SYNCD_GUI: 'off' }).gui, false);
  t.throws(() => readSettings(['--gui', '0', '--gui-assets', join(dir, 'gui')], {}), {
    name: 'SettingError',
    message: /^--gui-assets \/ STGUIASSETS: is given while --gui \/ SYNCD_GUI is 0/,
  });
  t.throws(() => readSettings(['--gui', 'maybe'], {}), {
    message: /--gui \/ SYNCD_GUI: "maybe" is not 1 or 0/,
  });
});

t.test('serve --help: aligned columns within 100, no empty default', async (t) => {
  const lines = usage().split('\n').slice(3);
  t.ok(
    lines.every((line) => line.length <= 100),
    'every line within 100 columns',
  );
  t.notMatch(usage(), /\(default \)/);
  const starts = new Set(
    lines.map((line) =>
      line.startsWith('  --') ? (/^( {2}--\S+ +\S+ +)/.exec(line)?.[1]?.length ?? 0) : line.search(/\S/),
    ),
  );
  t.equal(starts.size, 1, 'every description starts in the same column');
});
