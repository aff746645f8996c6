import { X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { connect } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import t from 'tap';
import { loadTls } from '../../../shared/tls.ts';
import { isAlive, startService, syncdBin } from '../../helpers/service.ts';

async function tempDir(t: { teardown(fn: () => unknown): void }) {
  const dir = await mkdtemp(join(tmpdir(), 'syncd-tls-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** The SHA-256 fingerprint of the certificate a TLS server presents. */
function servedFingerprint(address: string): Promise<string> {
  const at = address.lastIndexOf(':');
  return new Promise((resolve, reject) => {
    const socket = connect(
      { host: address.slice(0, at), port: Number(address.slice(at + 1)), rejectUnauthorized: false },
      () => {
        resolve(socket.getPeerX509Certificate()?.fingerprint256 ?? '');
        socket.destroy();
      },
    );
    socket.on('error', reject);
  });
}

t.test('a self-signed pair is generated into the home once and reused', async (t) => {
  const home = await tempDir(t);
  const first = await loadTls(home, {});
  t.equal(first.source, 'generated');
  t.equal((await stat(join(home, 'https-key.pem'))).mode & 0o777, 0o600, 'the key is private');
  const cert = new X509Certificate(first.cert);
  t.match(cert.subjectAltName, /DNS:localhost/);
  t.match(cert.subjectAltName, /IP Address:127\.0\.0\.1/);
  const again = await loadTls(home, {});
  t.same([again.source, again.cert], ['home', first.cert]);
});

t.test('unusable certificates are setting errors naming them', async (t) => {
  const dir = await tempDir(t);
  const other = await loadTls(await tempDir(t), {});
  const mine = await loadTls(dir, {});
  await writeFile(join(dir, 'cert.pem'), mine.cert);
  await writeFile(join(dir, 'other-key.pem'), other.key);
  await t.rejects(loadTls(dir, { cert: join(dir, 'cert.pem'), key: join(dir, 'other-key.pem') }), {
    name: 'SettingError',
    message: /--tls-cert \/ SYNCD_TLS_CERT and --tls-key \/ SYNCD_TLS_KEY: cannot serve TLS/,
  });
  await t.rejects(loadTls(dir, { cert: join(dir, 'missing.pem'), key: join(dir, 'other-key.pem') }), {
    message: /--tls-cert \/ SYNCD_TLS_CERT: cannot read/,
  });
  await rm(join(dir, 'https-key.pem'));
  await t.rejects(loadTls(dir, {}), { message: /https-key\.pem: is missing while its partner is there/ });
});

t.test(
  'with --tls the service speaks HTTPS, and keeps its certificate across restarts and starts',
  async (t) => {
    const home = await tempDir(t);
    const service = await startService(t, { tls: true, home });
    t.match(service.url, /^https:\/\//);
    t.same(await service.client.ping(), { ping: 'pong' });
    const fileFingerprint = new X509Certificate(await readFile(join(home, 'https-cert.pem'))).fingerprint256;
    t.equal(
      await servedFingerprint(service.address),
      fileFingerprint,
      'it serves the certificate in its home',
    );
    t.equal((await readFile(join(home, 'url'), 'utf8')).trim(), service.url, 'the url file says https');

    const pid = await service.workerPid();
    await service.client.restart();
    await service.waitForLog((line) => line.msg === 'worker ready');
    t.not(await service.workerPid(), pid);
    t.equal(
      await servedFingerprint(service.address),
      fileFingerprint,
      'the same certificate after a restart',
    );

    // Plain HTTP on the HTTPS port is refused by the TLS layer, and harms nothing.
    const plain = await fetch(`http://${service.address}/rest/system/ping`).then(
      (r) => r.status,
      () => 'failed',
    );
    t.not(plain, 200);
    t.same(await service.client.ping(), { ping: 'pong' }, 'still serving');

    // The command and the health check find it (https, its address, its certificate) through the home.
    const env = { SYNCD_HOME: home, SYNCD_ADDRESS: '', SYNCD_API_KEY: service.apiKey, SYNCD_TLS: '' };
    const ping = await execa('node', [syncdBin, 'ping'], { env, reject: false });
    t.equal(ping.exitCode, 0, ping.stderr);
    const health = await execa('node', ['dist/scripts/healthcheck.js'], { env, reject: false });
    t.equal(health.exitCode, 0, health.stderr);

    await service.client.shutdown();
    await service.exited;
    const next = await startService(t, { tls: true, home });
    t.equal(await servedFingerprint(next.address), fileFingerprint, 'the same certificate at the next start');
    t.ok(isAlive(next.supervisorPid!));
  },
);

t.test('with a certificate and key given, it serves those', async (t) => {
  const dir = await tempDir(t);
  const pair = await loadTls(dir, {});
  await writeFile(join(dir, 'given-cert.pem'), pair.cert);
  await writeFile(join(dir, 'given-key.pem'), pair.key);
  const service = await startService(t, {
    tls: true,
    env: { SYNCD_TLS_CERT: join(dir, 'given-cert.pem'), SYNCD_TLS_KEY: join(dir, 'given-key.pem') },
  });
  t.equal(await servedFingerprint(service.address), new X509Certificate(pair.cert).fingerprint256);
  await t.rejects(stat(join(service.home, 'https-cert.pem')), { code: 'ENOENT' }, 'nothing generated');
});

t.test('a certificate without its key stops the supervisor with code 2', async (t) => {
  const result = await execa('node', [syncdBin, 'serve', '--tls', '1', '--tls-cert', '/nonexistent.pem'], {
    env: { SYNCD_HOME: await tempDir(t), SYNCD_ADDRESS: '127.0.0.1:0' },
    reject: false,
  });
  t.equal(result.exitCode, 2);
  t.match(result.stdout, /--tls-key \/ SYNCD_TLS_KEY: the certificate and the key go together/);
});

t.test('the pair under the names of earlier versions is moved to the names Syncthing uses', async (t) => {
  const home = t.testdir();
  const generated = await loadTls(home, {});
  await rename(join(home, 'https-cert.pem'), join(home, 'tls-cert.pem'));
  await rename(join(home, 'https-key.pem'), join(home, 'tls-key.pem'));
  const loaded = await loadTls(home, {});
  t.equal(loaded.source, 'home', 'the same pair, not a new one');
  t.equal(loaded.cert, generated.cert);
  await t.rejects(stat(join(home, 'tls-cert.pem')), { code: 'ENOENT' });
  t.equal((await stat(join(home, 'https-key.pem'))).mode & 0o777, 0o600, 'the key stays private');
});
