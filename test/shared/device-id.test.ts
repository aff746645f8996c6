import { createHash, X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import t from 'tap';
import { canonicalDeviceId, deviceId, deviceIdProblem, shortId } from '../../shared/device-id.ts';

const hasSyncthing = (await execa('sh', ['-c', 'command -v syncthing'], { reject: false })).exitCode === 0;

t.test(
  'the device ID of a certificate Syncthing generated is the one Syncthing gives it',
  { skip: hasSyncthing ? false : 'syncthing is not installed (.ci/run installs it from Debian)' },
  async (t) => {
    for (let i = 0; i < 3; i++) {
      const home = t.testdir();
      await execa('syncthing', ['generate', `--home=${home}`, '--no-default-folder']);
      const theirs = (await execa('syncthing', ['serve', `--home=${home}`, '--device-id'])).stdout.trim();
      const der = new X509Certificate(await readFile(join(home, 'cert.pem'))).raw;
      t.equal(deviceId(der), theirs, theirs);
      const first8 = createHash('sha256').update(der).digest('hex').slice(0, 16);
      t.equal(
        shortId(der),
        BigInt(`0x${first8}`),
        'the short ID: the first 8 bytes, big-endian, as a bigint',
      );
      t.equal(deviceIdProblem(theirs), undefined);
    }
  },
);

t.test('malformed device IDs say what is wrong: length, alphabet, check character', async (t) => {
  const good = 'RFR5QYV-USWWDUL-HS54SQX-PPBXXJW-ARCNP65-74JIARS-VVIDBEL-STAQAQG';
  t.equal(deviceIdProblem(good), undefined);
  t.match(deviceIdProblem('bogus'), /56 characters \(63 with its dashes\), not 5/);
  t.match(deviceIdProblem(good.replace('R', '9')), /"9" is not a character/);
  t.match(deviceIdProblem(good.replace('USWWDUL', 'USWWDUM')), /check character of group 1 is wrong/);
  t.equal(
    canonicalDeviceId(good.toLowerCase().replace(/-/g, ' ')),
    good,
    'case, spaces and dashes do not matter',
  );
  t.equal(canonicalDeviceId(good.replace(/O/g, '0')), good, 'nor 0 for O');
});
