// Auto-accepting folders (Syncthing 1.19 handleAutoAccepts) on real directories: where a folder offered
// lands, what is a conflict, and what is never accepted.
import { mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { create } from '@bufbuild/protobuf';
import pino from 'pino';
import t from 'tap';
import { rawDeviceId } from '../../../shared/device-id.ts';
import { FolderSchema } from '../../../worker/bep/bep_pb.ts';
import { autoAcceptFolders, MAX_ACCEPTED } from '../../../worker/devices/auto-accept.ts';
import { localConfig, newDeviceId, testConfiguration, testDeviceId } from '../../helpers/config.ts';

const peer = newDeviceId();
const offer = (id: string, label = '', options: { token?: boolean; withoutMe?: boolean } = {}) =>
  create(FolderSchema, {
    id,
    label,
    devices: [...(options.withoutMe ? [] : [testDeviceId]), peer].map((device) => ({
      id: rawDeviceId(device),
      encryptionPasswordToken: options.token && device === peer ? new Uint8Array([1]) : new Uint8Array(),
    })),
  });

function setup(
  base: string,
  options: { folders?: Array<Record<string, unknown>>; autoAccept?: boolean; ignores?: string[] } = {},
) {
  const local = localConfig(
    testConfiguration({
      devices: [{ deviceID: peer, autoAcceptFolders: options.autoAccept ?? true }],
      folders: options.folders ?? [],
      defaults: {
        folder: { path: base, rescanIntervalS: 77 },
        ignores: { lines: options.ignores ?? [] },
      },
    }),
  );
  const lines: string[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line).msg) });
  const accept = (folders: ReturnType<typeof offer>[]) =>
    autoAcceptFolders({ config: local.config, myId: testDeviceId, logger }, peer, folders);
  const folder = (id: string) => local.config.current.folders.find((f) => f.id === id);
  return { local, lines, accept, folder };
}

t.test(
  'an unknown folder is added under defaults.folder.path at its label, shared with the device',
  async (t) => {
    const base = t.testdir();
    const { accept, folder, lines } = setup(base);
    await accept([offer('abcd-1234', 'Holiday: Photos!'), offer('up', '../../etc'), offer('nolabel')]);
    t.match(folder('abcd-1234'), {
      label: 'Holiday: Photos!',
      path: join(base, 'Holiday Photos'),
      rescanIntervalS: 77,
    });
    t.same(
      folder('abcd-1234')
        ?.devices.map((d) => d.deviceID)
        .sort(),
      [peer, testDeviceId].sort(),
      'shared with the device (and this one)',
    );
    t.equal(folder('up')?.path, join(base, '.. .. etc'), 'a label never leads out of the default path');
    t.equal(folder('nolabel')?.path, join(base, 'nolabel'), 'no label: the ID');
    t.match(lines, [
      `Auto-accepted ${peer} folder "Holiday: Photos!" (abcd-1234) at path ${join(base, 'Holiday Photos')}`,
    ]);
  },
);

t.test('a name taken on disk, a symlink there included, is a conflict: the ID, then nothing', async (t) => {
  const base = t.testdir({ Photos: {}, outside: {} });
  symlinkSync(join(base, 'outside'), join(base, 'linked'));
  symlinkSync(join(base, 'nowhere'), join(base, 'dangling'));
  const { accept, folder, lines } = setup(base);
  await accept([offer('photos-id', 'Photos'), offer('linked', 'dangling'), offer('Photos', 'Photos')]);
  t.equal(folder('photos-id')?.path, join(base, 'photos-id'), 'the label taken: the ID');
  t.notOk(folder('linked'), 'a symlink at either name is not followed, nor used');
  t.notOk(folder('Photos'), 'both names taken');
  t.match(lines, [
    `Failed to auto-accept folder "dangling" (linked) from ${peer} due to path conflict`,
    `Failed to auto-accept folder "Photos" (Photos) from ${peer} due to path conflict`,
    /^Auto-accepted .* \(photos-id\) at path/,
  ]);
});

t.test('two offers of the same name: the first gets it', async (t) => {
  const base = t.testdir();
  const { accept, folder } = setup(base);
  await accept([offer('one', 'Same'), offer('two', 'Same')]);
  t.equal(folder('one')?.path, join(base, 'Same'));
  t.equal(folder('two')?.path, join(base, 'two'));
});

t.test(
  'nothing is accepted without a usable defaults.folder.path, encrypted, or not offered to us',
  async (t) => {
    for (const [path, why] of [
      ['', /defaults\.folder\.path is empty/],
      ['relative/dir', /defaults\.folder\.path "relative\/dir" is relative/],
    ] as const) {
      const { accept, local, lines } = setup(path);
      await accept([offer('f', 'F')]);
      t.same(local.saved, [], `nothing saved for ${JSON.stringify(path)}`);
      t.match(lines, [why]);
    }
    const base = t.testdir();
    const { accept, local, lines } = setup(base);
    await accept([offer('secret', 'Secret', { token: true }), offer('other', 'Other', { withoutMe: true })]);
    t.same(local.saved, []);
    t.match(lines, [
      /^Not auto-accepting folder "Secret" \(secret\) from .*: it is offered encrypted, and receive-encrypted folders are not supported by syncd$/,
    ]);
    const off = setup(base, { autoAccept: false });
    await off.accept([offer('f', 'F')]);
    t.same(off.local.saved, [], 'a device without autoAcceptFolders');
  },
);

t.test('a known folder not shared with the device is shared, unless offered encrypted', async (t) => {
  const base = t.testdir();
  const { accept, folder, lines } = setup(base, {
    folders: [
      { id: 'known', path: '/tmp/known' },
      { id: 'locked', path: '/tmp/locked' },
    ],
  });
  await accept([offer('known', 'K'), offer('locked', 'L', { token: true })]);
  t.ok(
    folder('known')?.devices.some((d) => d.deviceID === peer),
    'shared',
  );
  t.equal(folder('known')?.path, '/tmp/known', 'where it is');
  t.notOk(
    folder('locked')?.devices.some((d) => d.deviceID === peer),
    'not shared',
  );
  t.match(lines, [
    `Shared known with ${peer} due to auto-accept`,
    /^Failed to auto-accept device .* on existing folder "L" \(locked\) as the remote wants to send us encrypted data/,
  ]);
});

t.test('the default ignores are written into an accepted folder', async (t) => {
  const base = join(t.testdir(), 'not-yet');
  const { accept, folder } = setup(base, { ignores: ['*.tmp', '// comment'] });
  await accept([offer('f', 'Ignoring')]);
  t.equal(folder('f')?.path, join(base, 'Ignoring'));
  t.equal(readFileSync(join(base, 'Ignoring', '.stignore'), 'utf8'), '*.tmp\n// comment\n');
});

t.test('one ClusterConfig adds at most MAX_ACCEPTED folders; the rest later', async (t) => {
  const base = t.testdir();
  const { accept, local } = setup(base);
  const many = Array.from({ length: MAX_ACCEPTED + 3 }, (_, i) => offer(`f${i}`, `F ${i}`));
  await accept(many);
  t.equal(local.config.current.folders.length, MAX_ACCEPTED);
  t.equal(local.saved.length, 1, 'in one change');
  mkdirSync(join(base, 'F 0'), { recursive: true });
  await accept(many);
  t.equal(local.config.current.folders.length, MAX_ACCEPTED + 3);
});
