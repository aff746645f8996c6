// The other devices, as Syncthing's "Remote Devices" panel: one card each, sorted by name, a line with
// its state that opens to its connection, traffic, completion and settings; the traffic of all of
// them together on top.
import { useEffect, useState } from 'preact/hooks';
import { del, get, messageOf, patch } from '../api.ts';
import { bytes, rate, shortId, time } from '../format.ts';
import { RateChart } from '../parts/rate-chart.tsx';
import { ActionButton, Badge, Button, Row } from '../parts/ui.tsx';
import {
  completion,
  config,
  connections,
  otherDevices,
  rates,
  refreshConfig,
  refreshConnections,
} from '../store.ts';
import type { Completion, Connection, DeviceConfiguration } from '../types.ts';
import { DeviceEditor } from './device-editor.tsx';

export function DevicesView() {
  const [editing, setEditing] = useState<DeviceConfiguration | 'new' | undefined>(undefined);
  const devices = [...otherDevices.value].sort((a, b) =>
    (a.name || a.deviceID).localeCompare(b.name || b.deviceID),
  );
  return (
    <div class="devices">
      <div class="section-head">
        <h2>Devices</h2>
        <Button onClick={() => setEditing('new')}>Add device</Button>
      </div>
      <TotalTraffic />
      {devices.length === 0 && (
        <p class="muted">No other device yet: add one with its device ID to sync folders with it.</p>
      )}
      {devices.map((device) => (
        <DeviceCard key={device.deviceID} device={device} onEdit={() => setEditing(device)} />
      ))}
      {editing && (
        <DeviceEditor
          device={editing === 'new' ? undefined : editing}
          onClose={() => setEditing(undefined)}
        />
      )}
    </div>
  );
}

function TotalTraffic() {
  const samples = rates.value.total;
  const last = samples?.at(-1);
  const total = connections.value?.total;
  return (
    <div class="card traffic" role="group" aria-label="Total traffic">
      <span class="traffic-text">
        <strong>Total</strong> <span class="rate-in">in {rate(last?.in ?? 0)}</span> (
        {bytes(total?.inBytesTotal)}) · <span class="rate-out">out {rate(last?.out ?? 0)}</span> (
        {bytes(total?.outBytesTotal)})
      </span>
      <RateChart samples={samples} label="Total traffic" />
    </div>
  );
}

type State = { text: string; tone: 'ok' | 'busy' | 'idle' | 'warn' };

/** The state Syncthing's GUI gives a device: paused, disconnected, syncing (its completion) or not. */
function stateOf(device: DeviceConfiguration, connection?: Connection, done?: Completion): State {
  if (device.paused) return { text: 'Paused', tone: 'idle' };
  if (!connection?.connected) return { text: 'Disconnected', tone: 'idle' };
  if (done && done.completion < 100) return { text: `Syncing ${whole(done.completion)}`, tone: 'busy' };
  return { text: 'Connected', tone: 'ok' };
}

// Completion in whole percents, rounded down as Syncthing's GUI shows it: never "100 %" while some is
// missing.
const whole = (value: number) => `${Math.floor(value)} %`;

const COMPRESSION: Record<string, string> = {
  metadata: 'Metadata only',
  always: 'All data',
  never: 'Off',
};

// syncd's connection types; Syncthing's GUI says TCP or relay, and which side dialed.
const CONNECTION_TYPES: Record<string, string> = {
  'tcp-client': 'TCP, dialed from here',
  'tcp-server': 'TCP, dialed by the device',
  'relay-client': 'Relay, dialed from here',
  'relay-server': 'Relay, dialed by the device',
};

// The folders' side of a device's completion: what Syncthing's GUI says of a folder the device has not
// accepted or has paused (remoteState of /rest/db/completion).
const REMOTE_STATES: Record<string, string> = {
  notSharing: 'not accepted by the device yet',
  paused: 'paused on the device',
};

function DeviceCard(props: { device: DeviceConfiguration; onEdit: () => void }) {
  const { device } = props;
  const id = device.deviceID;
  const name = device.name || shortId(id);
  const connection = connections.value?.connections[id];
  const connected = Boolean(connection?.connected);
  const done = completion.value[` ${id}`];
  const state = stateOf(device, connection, done);
  const folders = (config.value?.folders ?? []).filter((folder) =>
    folder.devices.some((shared) => shared.deviceID === id),
  );
  const samples = rates.value[id];
  const last = samples?.at(-1);
  const [open, setOpen] = useState(false);
  return (
    <details
      class="card device"
      aria-label={`Device ${name}`}
      onToggle={(event) => setOpen((event.currentTarget as HTMLDetailsElement).open)}
    >
      <summary>
        <h3>{name}</h3>
        <Badge tone={state.tone}>{state.text}</Badge>
      </summary>
      <dl>
        <Row label="Connection">
          {connected && connection ? (
            <>
              Connected since {time(connection.startedAt)}
              <div class="muted">
                {connection.address} · {CONNECTION_TYPES[connection.type] ?? connection.type}
              </div>
            </>
          ) : (
            <>
              {device.paused ? 'Paused' : 'Disconnected'}
              {open && <LastSeen id={id} />}
            </>
          )}
        </Row>
        {connected && connection && (
          <>
            <Row label="Client">{connection.clientVersion || '–'}</Row>
            <Row label="Traffic">
              <span class="rate-in">in {rate(last?.in ?? 0)}</span> ({bytes(connection.inBytesTotal)}) ·{' '}
              <span class="rate-out">out {rate(last?.out ?? 0)}</span> ({bytes(connection.outBytesTotal)})
              <RateChart samples={samples} label={`Traffic with ${name}`} />
            </Row>
            {done && (
              <Row label="Completion">
                {whole(done.completion)}
                {done.needBytes > 0 &&
                  ` · needs ${bytes(done.needBytes)} (${done.needItems} ${done.needItems === 1 ? 'item' : 'items'})`}
              </Row>
            )}
          </>
        )}
        <Row label="Folders">
          {folders.length === 0
            ? 'none shared'
            : folders.map((folder) => {
                const each = completion.value[`${folder.id} ${id}`];
                const note = each?.remoteState ? REMOTE_STATES[each.remoteState] : undefined;
                return (
                  <div key={folder.id}>
                    {folder.label || folder.id}
                    {connected && each && (
                      <span class="muted">
                        {' '}
                        · {note ?? (each.completion < 100 ? whole(each.completion) : 'up to date')}
                      </span>
                    )}
                  </div>
                );
              })}
        </Row>
        <Row label="Addresses">{device.addresses.join(', ') || 'dynamic'}</Row>
        <Row label="Compression">{COMPRESSION[device.compression] ?? device.compression}</Row>
        <Row label="Introducer">{device.introducer ? 'Yes' : 'No'}</Row>
        {device.autoAcceptFolders && <Row label="Auto accept">Yes</Row>}
        <Row label="Device ID">
          <code class="device-id">{id}</code>
        </Row>
      </dl>
      <div class="actions">
        <Button onClick={props.onEdit}>Edit</Button>
        <ActionButton
          action={async () => {
            await patch(`/rest/config/devices/${encodeURIComponent(id)}`, { paused: !device.paused });
            await Promise.all([refreshConfig(), refreshConnections()]);
          }}
        >
          {device.paused ? 'Resume' : 'Pause'}
        </ActionButton>
        <ActionButton
          kind="danger"
          confirm={`Remove device ${name}? The folders stop being shared with it; their files here stay.`}
          action={async () => {
            await del(`/rest/config/devices/${encodeURIComponent(id)}`);
            await refreshConfig();
          }}
        >
          Remove
        </ActionButton>
      </div>
    </details>
  );
}

/** When a disconnected device was last connected (GET /rest/stats/device), read when its card opens. */
function LastSeen(props: { id: string }) {
  const [seen, setSeen] = useState<{ at?: string; error?: string }>({});
  useEffect(() => {
    get<Record<string, { lastSeen: string }>>('/rest/stats/device')
      .then((stats) => setSeen({ at: stats[props.id]?.lastSeen }))
      .catch((error: unknown) => setSeen({ error: messageOf(error) }));
  }, [props.id]);
  if (seen.error) return <div class="error-text">{seen.error}</div>;
  if (!seen.at) return null;
  // A device never seen has Go's zero time, or the Unix epoch (syncd's, as Syncthing's stats answer it).
  const never = !(Date.parse(seen.at) > 0);
  return <div class="muted">Last seen: {never ? 'never' : time(seen.at)}</div>;
}
