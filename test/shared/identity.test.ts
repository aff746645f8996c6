import { X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import t from 'tap';
import { loadIdentity, readDeviceId } from '../../shared/identity.ts';

const hasSyncthing = (await execa('sh', ['-c', 'command -v syncthing'], { reject: false })).exitCode === 0;

t.test(
  'the first start generates the device certificate as Syncthing does; later starts reuse it',
  async (t) => {
    const home = t.testdir();
    const first = await loadIdentity(home);
    t.equal(first.source, 'generated');
    t.match(first.deviceId, /^([A-Z2-7]{7}-){7}[A-Z2-7]{7}$/);
    const cert = new X509Certificate(first.cert);
    t.equal(cert.subject, 'O=Syncthing\nOU=Automatically Generated\nCN=syncthing');
    t.equal(cert.subjectAltName, 'DNS:syncthing');
    t.same(cert.publicKey.asymmetricKeyDetails, { namedCurve: 'secp384r1' }, 'ECDSA P-384');
    const years = (Date.parse(cert.validTo) - Date.parse(cert.validFrom)) / (365 * 86_400_000);
    t.equal(years, 20, 'valid 20 years');
    for (const file of ['cert.pem', 'key.pem'])
      t.equal((await stat(join(home, file))).mode & 0o777, 0o600, file);
    const again = await loadIdentity(home);
    t.same([again.source, again.deviceId], ['home', first.deviceId], 'the same identity');
    t.equal(await readDeviceId(home), first.deviceId);
  },
);

t.test(
  'Syncthing loads the generated pair and gives it the same device ID',
  { skip: hasSyncthing ? false : 'syncthing is not installed' },
  async (t) => {
    const home = t.testdir();
    const { deviceId } = await loadIdentity(home);
    t.equal((await execa('syncthing', ['serve', `--home=${home}`, '--device-id'])).stdout.trim(), deviceId);
  },
);

t.test(
  'a certificate that cannot be used stops the start, naming the file, and is never overwritten',
  async (t) => {
    const home = t.testdir();
    await loadIdentity(home);
    const other = await mkdtemp(join(tmpdir(), 'syncd-identity-'));
    t.teardown(() => rm(other, { recursive: true, force: true }));
    await loadIdentity(other);
    // A key of another device beside this certificate.
    const key = await readFile(join(home, 'key.pem'), 'utf8');
    await writeFile(join(home, 'key.pem'), await readFile(join(other, 'key.pem'), 'utf8'));
    await t.rejects(loadIdentity(home), {
      name: 'SettingError',
      message: /cert\.pem and .*key\.pem: do not go together/,
    });
    await writeFile(join(home, 'key.pem'), key);
    await writeFile(join(home, 'cert.pem'), 'not a certificate');
    await t.rejects(loadIdentity(home), { message: /cert\.pem: is not a PEM certificate/ });
    t.equal(await readFile(join(home, 'cert.pem'), 'utf8'), 'not a certificate', 'left as it was');
    await rename(join(home, 'cert.pem'), join(home, 'moved.pem'));
    await t.rejects(loadIdentity(home), { message: /cert\.pem: is missing while its partner is there/ });
  },
);
