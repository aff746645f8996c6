// The introducer's edit of the configuration (Syncthing 1.19 handleIntroductions and
// handleDeintroductions), on configurations as prepare() keeps them.
import { create } from '@bufbuild/protobuf';
import t from 'tap';
import { prepare } from '../../../shared/config/decode.ts';
import type { Configuration } from '../../../shared/config/defaults.ts';
import { rawDeviceId } from '../../../shared/device-id.ts';
import { Compression, FolderSchema } from '../../../worker/bep/bep_pb.ts';
import { introduceFrom, MAX_INTRODUCED } from '../../../worker/devices/introductions.ts';
import { newDeviceId, testConfiguration, testDeviceId } from '../../helpers/config.ts';

const introducer = newDeviceId();
const [second, third] = [newDeviceId(), newDeviceId()];

type Listed = { id: string; name?: string; addresses?: string[]; introducer?: boolean; token?: boolean };
const offer = (id: string, listed: Listed[]) =>
  create(FolderSchema, {
    id,
    label: `label ${id}`,
    devices: [{ id: testDeviceId }, { id: introducer }, ...listed].map((device) => ({
      id: rawDeviceId(device.id),
      name: 'name' in device ? device.name : '',
      addresses: 'addresses' in device ? device.addresses : [],
      compression: Compression.ALWAYS,
      certName: device.id === second ? 'second.example' : '',
      introducer: 'introducer' in device ? device.introducer : false,
      encryptionPasswordToken: 'token' in device && device.token ? new Uint8Array([1]) : new Uint8Array(),
    })),
  });

function configWith(
  options: {
    devices?: Array<Record<string, unknown>>;
    folders?: Array<{ id: string; devices: Array<string | { deviceID: string; introducedBy: string }> }>;
    skip?: boolean;
  } = {},
): Configuration {
  return testConfiguration({
    devices: [
      {
        deviceID: introducer,
        introducer: true,
        skipIntroductionRemovals: options.skip ?? false,
        compression: 'never',
      },
      ...(options.devices ?? []),
    ],
    folders: (options.folders ?? [{ id: 'shared', devices: [introducer] }]).map(({ id, devices }) => ({
      id,
      path: `/tmp/${id}`,
      devices: devices.map((device) => (typeof device === 'string' ? { deviceID: device } : device)),
    })),
  });
}

// The edit as the worker makes it: on a copy, then prepared (which would refuse what is inconsistent).
function introduce(config: Configuration, folders: ReturnType<typeof offer>[], from = introducer) {
  const draft = structuredClone(config);
  const said = introduceFrom(draft, from, folders, testDeviceId);
  return { config: prepare(draft, testDeviceId, 'here'), said };
}
const device = (config: Configuration, id: string) => config.devices.find((d) => d.deviceID === id);
const sharesOf = (config: Configuration, folder: string) =>
  config.folders.find((f) => f.id === folder)?.devices.filter((d) => d.deviceID !== testDeviceId);

t.test(
  'a device the introducer lists in a shared folder is added, and the folder shared with it',
  async (t) => {
    const { config, said } = introduce(configWith(), [
      offer('shared', [
        {
          id: second,
          name: 'second',
          addresses: ['tcp://192.0.2.2:22000', 'dynamic', 'bogus', 'quic://192.0.2.2:22000'],
          introducer: true,
        },
      ]),
    ]);
    t.match(device(config, second), {
      name: 'second',
      addresses: ['dynamic', 'tcp://192.0.2.2:22000', 'quic://192.0.2.2:22000'],
      compression: 'never',
      certName: 'second.example',
      introducedBy: introducer,
      introducer: true,
      skipIntroductionRemovals: false,
      autoAcceptFolders: false,
    });
    t.same(
      sharesOf(config, 'shared')?.find((d) => d.deviceID === second),
      {
        deviceID: second,
        introducedBy: introducer,
        encryptionPassword: '',
      },
    );
    t.equal(sharesOf(config, 'shared')?.length, 2, 'the introducer and the second device');
    t.match(said, [
      `Adding device ${second} to config (vouched for by introducer ${introducer})`,
      `Device ${second} is now also an introducer`,
      `Sharing folder "label shared" (shared) with ${second} (vouched for by introducer ${introducer})`,
    ]);
    t.same(introduce(config, [offer('shared', [{ id: second }])]).said, [], 'said again: nothing to do');
  },
);

t.test(
  'a device known already only gets the share; a folder not shared with the introducer nothing',
  async (t) => {
    const base = configWith({
      devices: [{ deviceID: second, name: 'mine' }],
      folders: [
        { id: 'shared', devices: [introducer] },
        { id: 'private', devices: [] },
      ],
    });
    const { config } = introduce(base, [
      offer('shared', [{ id: second, name: 'theirs' }]),
      offer('private', [{ id: third }]),
    ]);
    t.equal(device(config, second)?.name, 'mine', 'a known device keeps its configuration');
    t.equal(device(config, second)?.introducedBy, '', 'nor is it marked introduced');
    t.ok(sharesOf(config, 'shared')?.some((d) => d.deviceID === second && d.introducedBy === introducer));
    t.notOk(device(config, third), 'nothing from a folder not shared with the introducer');
    t.same(sharesOf(config, 'private'), []);
    t.same(
      introduce(base, [offer('unknown', [{ id: third }])]).config,
      base,
      'nor from a folder unknown here',
    );
  },
);

t.test('a device that is not an introducer introduces nothing', async (t) => {
  const base = configWith({
    devices: [{ deviceID: second }],
    folders: [{ id: 'shared', devices: [introducer, second] }],
  });
  const { config, said } = introduce(base, [offer('shared', [{ id: third }])], second);
  t.same(config, base);
  t.same(said, []);
});

t.test('a device with an encryption token is added but not shared with', async (t) => {
  const { config, said } = introduce(configWith(), [offer('shared', [{ id: second, token: true }])]);
  t.ok(device(config, second), 'added, as Syncthing adds it');
  t.notOk(
    sharesOf(config, 'shared')?.some((d) => d.deviceID === second),
    'not shared with',
  );
  t.match(
    said[1],
    /^Cannot share folder "label shared" \(shared\) with .* because the introducer .* encrypts data/,
  );
});

t.test(
  'what the introducer no longer lists goes, as it introduced it; skipIntroductionRemovals keeps it',
  async (t) => {
    const { config: both } = introduce(
      configWith({
        folders: [
          { id: 'a', devices: [introducer] },
          { id: 'b', devices: [introducer] },
        ],
      }),
      [offer('a', [{ id: second }, { id: third }]), offer('b', [{ id: second }])],
    );
    t.ok(sharesOf(both, 'b')?.some((d) => d.deviceID === second));
    // The introducer stops sharing b with the second device, and a with the third.
    const { config: fewer, said } = introduce(both, [offer('a', [{ id: second }]), offer('b', [])]);
    t.notOk(
      sharesOf(fewer, 'b')?.some((d) => d.deviceID === second),
      'the share of b went',
    );
    t.ok(
      sharesOf(fewer, 'a')?.some((d) => d.deviceID === second),
      'the share of a stays',
    );
    t.notOk(device(fewer, third), 'the third device went: listed nowhere');
    t.ok(device(fewer, second), 'the second stays');
    t.match(said, [
      /^Unsharing folder a with .* as introducer .* no longer shares the folder with that device$/,
      /^Unsharing folder b with /,
      `Removing device ${third} as introducer ${introducer} no longer shares any folders with that device`,
    ]);
    // A folder the introducer stops sharing with this device at all: its introduced shares go too.
    const { config: none } = introduce(fewer, []);
    t.notOk(device(none, second), 'the second went with the last folder');
    const skipping = structuredClone(both);
    for (const d of skipping.devices) if (d.deviceID === introducer) d.skipIntroductionRemovals = true;
    const { config: kept, said: quiet } = introduce(skipping, []);
    t.same(kept, skipping, 'skipIntroductionRemovals: nothing removed');
    t.same(quiet, []);
  },
);

t.test('an introduced device shared here otherwise is kept, and said so', async (t) => {
  const base = configWith({
    devices: [{ deviceID: second, introducedBy: introducer }],
    folders: [
      { id: 'shared', devices: [introducer, { deviceID: second, introducedBy: introducer }] },
      { id: 'mine', devices: [second] },
    ],
  });
  const { config, said } = introduce(base, [offer('shared', [])]);
  t.ok(device(config, second), 'kept');
  t.same(
    sharesOf(config, 'mine')?.map((d) => d.deviceID),
    [second],
  );
  t.match(said[1], /^Would have removed .* as .* no longer shares any folders, yet there are other folders/);
});

t.test('a removed device is taken off the new folders’ defaults too', async (t) => {
  const base = configWith({
    devices: [{ deviceID: second, introducedBy: introducer }],
    folders: [{ id: 'shared', devices: [introducer, { deviceID: second, introducedBy: introducer }] }],
  });
  base.defaults.folder.devices.push({ deviceID: second, introducedBy: '', encryptionPassword: '' });
  const { config } = introduce(prepare(base, testDeviceId, 'here'), [offer('shared', [])]);
  t.notOk(device(config, second));
  t.same(
    config.defaults.folder.devices.map((d) => d.deviceID),
    [testDeviceId],
  );
});

t.test('one ClusterConfig adds at most MAX_INTRODUCED devices', async (t) => {
  const many = Array.from({ length: MAX_INTRODUCED + 5 }, () => ({ id: newDeviceId() }));
  const { config, said } = introduce(configWith(), [offer('shared', many)]);
  t.equal(config.devices.length, 2 + MAX_INTRODUCED, 'this device, the introducer and the bound');
  t.equal(sharesOf(config, 'shared')?.length, 1 + MAX_INTRODUCED);
  t.match(said.at(-1), /^Not everything introducer .* vouches for was added: at most 100 devices/);
  // The ones left out are not removed later for it; the next ClusterConfig adds them.
  const { config: next } = introduce(config, [offer('shared', many)]);
  t.equal(next.devices.length, 2 + MAX_INTRODUCED + 5);
});
