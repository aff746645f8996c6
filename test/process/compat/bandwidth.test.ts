// Bandwidth limits against a real Syncthing 1.19: what syncd sends keeps to options.maxSendKbps, the
// LAN (loopback here) included once limitBandwidthInLan is set, and the file arrives whole.
import { createHash, randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { api, startDevice } from '../../helpers/service.ts';
import {
  hasSyncthing,
  NO_SYNCTHING,
  pollUntil,
  shareFolder,
  startSyncthing,
} from '../../helpers/syncthing.ts';

const skip = hasSyncthing ? false : NO_SYNCTHING;
const SIZE = 10 * 1024 * 1024;

t.test('10 MiB sent to Syncthing at 1 MiB/s takes at least 8 s, and arrives whole', { skip }, async (t) => {
  const dir = t.testdir({ theirs: {}, ours: { '.stfolder': {} } });
  const [theirs, mine] = [join(dir, 'theirs'), join(dir, 'ours')];
  const data = randomBytes(SIZE);
  await writeFile(join(mine, 'big.bin'), data);
  const device = await startDevice(t);
  // 1024 KiB/s out, on loopback too (the LAN goes unlimited otherwise, as in Syncthing).
  await api(device.syncd, 'PATCH', '/rest/config/options', { maxSendKbps: 1024, limitBandwidthInLan: true });
  const syncthing = await startSyncthing(t);
  const started = performance.now();
  await shareFolder({ syncthing, device, folder: 'limited', theirs, mine });
  await pollUntil(
    'big.bin on Syncthing',
    async () => (await readFile(join(theirs, 'big.bin')).catch(() => Buffer.alloc(0))).length === SIZE,
    120_000,
  );
  const took = (performance.now() - started) / 1000;
  const digest = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
  t.equal(digest(await readFile(join(theirs, 'big.bin'))), digest(data), 'the same bytes');
  // 10 MiB less the 512 KiB burst at 1 MiB/s is 9.5 s; a generous bound below it.
  t.ok(took >= 8, `took ${took.toFixed(1)} s (at least 8 s)`);
});
