// syncd and a real Syncthing 1.19 connected over the sync protocol, on loopback: both ways, pause and
// resume from each side, an unknown device pending on each side, and the connection back after an API
// restart and after a worker crash.
import t from 'tap';
import { execa } from 'execa';
import { api, type Service, startDevice, syncdBin } from '../helpers/service.ts';
import {
  hasSyncthing,
  NO_SYNCTHING,
  pollUntil,
  type Syncthing,
  startSyncthing,
} from '../helpers/syncthing.ts';

const skip = hasSyncthing ? false : NO_SYNCTHING;

interface ConnectionView {
  connected: boolean;
  paused: boolean;
  type: string;
  crypto: string;
  clientVersion: string;
  address: string;
  inBytesTotal: number;
  outBytesTotal: number;
  startedAt: string;
}
type Connections = { connections: Record<string, ConnectionView> };
type Pending = Record<string, { name: string; address: string; time: string }>;

/** How each side sees the other, once `check` holds, within a generous bound. */
function syncdSees(
  syncd: Service,
  id: string,
  check: (view: ConnectionView | undefined) => boolean,
  ms?: number,
) {
  return pollUntil(
    `syncd's view of ${id}`,
    async () => {
      const view = (await api<Connections>(syncd, 'GET', '/rest/system/connections')).connections[id];
      return check(view) && { view };
    },
    ms,
  ).then(({ view }) => view as ConnectionView);
}

function syncthingSees(
  syncthing: Syncthing,
  id: string,
  check: (view: ConnectionView | undefined) => boolean,
) {
  return syncthing
    .until(`its view of ${id}`, async () => {
      const view = (await syncthing.call<Connections>('GET', '/rest/system/connections')).connections[id];
      return check(view) && { view };
    })
    .then(({ view }) => view as ConnectionView);
}

const connected = (view: ConnectionView | undefined) => view?.connected === true;
const disconnected = (view: ConnectionView | undefined) => view?.connected === false;

t.test(
  'syncd dials Syncthing: both see the connection, TLS 1.3, and syncd for what it is',
  { skip },
  async (t) => {
    const syncthing = await startSyncthing(t);
    const { syncd, id, listen } = await startDevice(t);
    t.match(listen, /^tcp:\/\/127\.0\.0\.1:\d+$/, 'syncd listens where the harness said');
    // Syncthing knows syncd only as dynamic (no discovery here): syncd is the one that dials.
    await syncthing.call('POST', '/rest/config/devices', {
      deviceID: id,
      name: 'syncd',
      addresses: ['dynamic'],
    });
    await api(syncd, 'POST', '/rest/config/devices', {
      deviceID: syncthing.id,
      name: 'st',
      addresses: [syncthing.listen],
    });
    const theirs = await syncthingSees(syncthing, id, connected);
    t.match(theirs, { type: 'tcp-server', crypto: /^TLS1\.3-TLS_AES/, clientVersion: /^syncd v\d/ });
    const ours = await syncdSees(syncd, syncthing.id, connected);
    t.match(ours, {
      type: 'tcp-client',
      crypto: /^TLS1\.3-TLS_AES/,
      clientVersion: 'v1.19.2-ds1',
      address: syncthing.listen.slice(6),
    });
    t.ok(ours.inBytesTotal > 0 && ours.outBytesTotal > 0, 'bytes counted both ways');
    const listed = await execa(process.execPath, [syncdBin, 'devices'], {
      env: { SYNCD_ADDRESS: syncd.address, SYNCD_API_KEY: syncd.apiKey },
      reject: false,
    });
    t.match(
      listed.stdout,
      new RegExp(`${syncthing.id}  st  ${syncthing.listen}  \\(connected at 127\\.0\\.0\\.1:\\d+, v1\\.19`),
      'syncd devices says so',
    );
    const all = await api<Array<{ type: string; data: Record<string, unknown> }>>(
      syncd,
      'GET',
      '/rest/events?since=0&timeout=0',
    );
    t.match(
      all.find((event) => event.type === 'DeviceConnected')?.data,
      {
        id: syncthing.id,
        clientName: 'syncthing',
        clientVersion: 'v1.19.2-ds1',
        type: 'tcp-client',
        addr: syncthing.listen.slice(6),
      },
      'DeviceConnected',
    );
    t.ok(
      all.some((event) => event.type === 'ClusterConfigReceived' && event.data.device === syncthing.id),
      'ClusterConfigReceived',
    );
  },
);

t.test('Syncthing dials syncd; pause and resume from each side', { skip }, async (t) => {
  const syncthing = await startSyncthing(t);
  const { syncd, id, listen } = await startDevice(t);
  // This time only Syncthing knows where the other listens.
  await api(syncd, 'POST', '/rest/config/devices', {
    deviceID: syncthing.id,
    name: 'st',
    addresses: ['dynamic'],
  });
  await syncthing.call('POST', '/rest/config/devices', { deviceID: id, name: 'syncd', addresses: [listen] });
  t.match(await syncdSees(syncd, syncthing.id, connected), { type: 'tcp-server' });
  // From here on syncd knows where Syncthing listens too, so that a resume on either side does not
  // wait for Syncthing's own redial, which comes at most once a minute per address.
  await api(syncd, 'PATCH', `/rest/config/devices/${syncthing.id}`, { addresses: [syncthing.listen] });

  // syncd pauses Syncthing: the connection closes at once, and Syncthing's dials are refused.
  await api(syncd, 'POST', `/rest/system/pause?device=${syncthing.id}`);
  await syncthingSees(syncthing, id, disconnected);
  t.match(await syncdSees(syncd, syncthing.id, disconnected), { paused: true }, 'paused in syncd');
  await api(syncd, 'POST', `/rest/system/resume?device=${syncthing.id}`);
  await syncdSees(syncd, syncthing.id, connected);
  t.pass('back after syncd resumed it');

  // Syncthing pauses syncd: the connection ends, and syncd's dials are refused (each gets as far as the
  // Hellos, so syncd's own view flickers; Syncthing's says it) until Syncthing resumes.
  const pausedAt = Date.now();
  await syncthing.call('POST', `/rest/system/pause?device=${id}`);
  t.match(await syncthingSees(syncthing, id, disconnected), { paused: true }, 'paused in Syncthing');
  await syncthing.call('POST', `/rest/system/resume?device=${id}`);
  // syncd dials again with backoff while refused (up to a minute apart), or Syncthing dials first.
  await syncdSees(
    syncd,
    syncthing.id,
    (view) => connected(view) && Date.parse(view?.startedAt ?? '') > pausedAt,
    90_000,
  );
  await syncthingSees(syncthing, id, connected);
  t.pass('back after Syncthing resumed it, on a new connection');
});

t.test('an unknown device is pending on each side', { skip }, async (t) => {
  const syncthing = await startSyncthing(t);
  const { syncd, id, listen } = await startDevice(t);
  // Syncthing dials syncd, which does not know it.
  await syncthing.call('POST', '/rest/config/devices', { deviceID: id, name: 'syncd', addresses: [listen] });
  const pending = await pollUntil('Syncthing pending in syncd', async () => {
    const list = await api<Pending>(syncd, 'GET', '/rest/cluster/pending/devices');
    return list[syncthing.id];
  });
  t.match(
    pending,
    { address: /^127\.0\.0\.1:\d+$/, time: /^\d{4}-/ },
    'syncd lists Syncthing, and where it came from',
  );
  const connections = await api<Connections>(syncd, 'GET', '/rest/system/connections');
  t.notOk(connections.connections[syncthing.id], 'and it is no configured device');
  // Syncthing dials again every few seconds: paused there first, so that what is checked is the
  // dismissal, not a new attempt a moment after it.
  await syncthing.call('PATCH', `/rest/config/devices/${id}`, { paused: true });
  await api(syncd, 'DELETE', `/rest/cluster/pending/devices?device=${syncthing.id}`);
  t.notOk((await api<Pending>(syncd, 'GET', '/rest/cluster/pending/devices'))[syncthing.id], 'dismissed');

  // syncd dials a Syncthing that does not know it.
  const other = await startSyncthing(t, 'second syncthing');
  await api(syncd, 'POST', '/rest/config/devices', {
    deviceID: other.id,
    name: 'st2',
    addresses: [other.listen],
  });
  const theirs = await other.until('syncd pending', async () => {
    const list = await other.call<Pending>('GET', '/rest/cluster/pending/devices');
    return list[id];
  });
  t.match(
    theirs,
    { address: /^127\.0\.0\.1:\d+$/, name: /./ },
    "Syncthing lists syncd, with its Hello's name",
  );
  // Adding it makes it a device: connected, and no longer pending.
  await other.call('POST', '/rest/config/devices', { deviceID: id, name: 'syncd', addresses: ['dynamic'] });
  // syncd has been refused until now, and dials again with backoff (up to a minute apart).
  await syncdSees(syncd, other.id, connected, 90_000);
  t.pass('connected once Syncthing added it');
});

t.test('the connection comes back after an API restart and after a worker crash', { skip }, async (t) => {
  const syncthing = await startSyncthing(t);
  const { syncd, id, listen } = await startDevice(t);
  await api(syncd, 'POST', '/rest/config/devices', { deviceID: syncthing.id, addresses: [syncthing.listen] });
  await syncthing.call('POST', '/rest/config/devices', { deviceID: id, addresses: [listen] });
  const first = await syncdSees(syncd, syncthing.id, connected);

  await api(syncd, 'POST', '/rest/system/restart');
  const afterRestart = await syncdSees(
    syncd,
    syncthing.id,
    (view) => connected(view) && Date.parse(view?.startedAt ?? '') > Date.parse(first.startedAt),
  );
  t.ok(afterRestart, 'connected again after the restart, on a new connection');

  const worker = await syncd.workerPid();
  process.kill(worker, 'SIGKILL');
  await pollUntil('a new worker', async () => (await syncd.workerPid().catch(() => worker)) !== worker);
  await syncdSees(syncd, syncthing.id, connected);
  await syncthingSees(syncthing, id, connected);
  t.pass('connected again after the crash');
});

t.test('a discovery hint: kept in the cache, and a dynamic device is dialed there', { skip }, async (t) => {
  const syncthing = await startSyncthing(t);
  const { syncd, id } = await startDevice(t);
  await syncthing.call('POST', '/rest/config/devices', { deviceID: id, addresses: ['dynamic'] });
  await api(syncd, 'POST', '/rest/config/devices', { deviceID: syncthing.id, addresses: ['dynamic'] });
  t.same(await api(syncd, 'GET', '/rest/system/discovery'), {}, 'nothing known yet');
  for (const [query, problem] of [
    [`device=nonsense&addr=${syncthing.listen}`, /device ID/],
    [`device=${syncthing.id}&addr=http://x:1`, /unknown scheme http/],
    [`device=${syncthing.id}&addr=tcp://0.0.0.0:22000`, /names no host/],
    [`device=${syncthing.id}`, /addr=tcp:\/\/HOST:PORT/],
  ] as const) {
    await t.rejects(api(syncd, 'POST', `/rest/system/discovery?${query}`), { message: problem }, query);
  }
  await api(syncd, 'POST', `/rest/system/discovery?device=${syncthing.id}&addr=${syncthing.listen}`);
  t.same(await api(syncd, 'GET', '/rest/system/discovery'), {
    [syncthing.id]: { addresses: [syncthing.listen] },
  });
  await syncdSees(syncd, syncthing.id, connected);
  t.pass('dialed at the hinted address');
});
