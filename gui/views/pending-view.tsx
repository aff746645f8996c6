// The offers of other devices, on top of the overview as Syncthing's notices: a device that is not
// configured and asked to connect, a folder a device shares that is not shared with it here. Each is
// accepted, ignored for good, or dismissed (listed again when it asks again).
import { useState } from 'preact/hooks';
import { del, get, patch, put } from '../api.ts';
import { shortId, time } from '../format.ts';
import { ActionButton, Button } from '../parts/ui.tsx';
import {
  config,
  deviceName,
  pendingDevices,
  pendingFolders,
  refreshConfig,
  refreshPending,
} from '../store.ts';
import type { Configuration } from '../types.ts';
import { AcceptFolder } from './accept-folder.tsx';
import { DeviceEditor } from './device-editor.tsx';

export function PendingNotices() {
  const [adding, setAdding] = useState<{ deviceID: string; name: string; address: string } | undefined>(
    undefined,
  );
  const [accepting, setAccepting] = useState<{ folder: string; label: string; device: string } | undefined>(
    undefined,
  );
  const configured = new Set((config.value?.devices ?? []).map((device) => device.deviceID));
  const devices = Object.entries(pendingDevices.value)
    .filter(([id]) => !configured.has(id))
    .sort(([, a], [, b]) => a.time.localeCompare(b.time));
  const offers = Object.entries(pendingFolders.value)
    .flatMap(([folder, { offeredBy }]) =>
      Object.entries(offeredBy).map(([device, offer]) => ({ folder, device, ...offer })),
    )
    .filter((offer) => configured.has(offer.device))
    .sort((a, b) => a.time.localeCompare(b.time));
  return (
    <>
      {(devices.length > 0 || offers.length > 0) && (
        <div class="notices">
          {devices.map(([id, device]) => (
            <PendingDevice
              key={id}
              id={id}
              name={device.name}
              address={device.address}
              at={device.time}
              onAdd={() => setAdding({ deviceID: id, name: device.name, address: device.address })}
            />
          ))}
          {offers.map((offer) => (
            <PendingFolder
              key={`${offer.folder} ${offer.device}`}
              {...offer}
              onAdd={() => setAccepting({ folder: offer.folder, label: offer.label, device: offer.device })}
            />
          ))}
        </div>
      )}
      {adding && <DeviceEditor prefill={adding} onClose={() => setAdding(undefined)} />}
      {accepting && <AcceptFolder {...accepting} onClose={() => setAccepting(undefined)} />}
    </>
  );
}

function PendingDevice(props: { id: string; name: string; address: string; at: string; onAdd: () => void }) {
  const name = props.name || shortId(props.id);
  const dismiss = async () => {
    await del('/rest/cluster/pending/devices', { device: props.id });
    await refreshPending();
  };
  // Syncthing's GUI ignores a device by adding it to remoteIgnoredDevices in the whole configuration;
  // the service then drops it from the pending devices (model.go cleanPending) and refuses it unlisted.
  const ignore = async () => {
    const whole = await get<Configuration>('/rest/config');
    whole.remoteIgnoredDevices = [
      ...whole.remoteIgnoredDevices.filter((device) => device.deviceID !== props.id),
      { time: new Date().toISOString(), deviceID: props.id, name: props.name, address: props.address },
    ];
    await put('/rest/config', whole);
    await refreshPending();
  };
  return (
    <article class="card notice" aria-label={`Pending device ${name}`}>
      <p>
        Device <strong>{name}</strong> (<code class="device-id">{props.id}</code>) at {props.address} wants to
        connect. <time dateTime={props.at}>{time(props.at)}</time>
      </p>
      <div class="actions">
        <Button kind="primary" onClick={props.onAdd}>
          Add device
        </Button>
        <ActionButton
          action={ignore}
          title="Refuse this device from now on, without asking again"
          confirm={`Ignore device ${name}? It is refused from now on without asking again.`}
        >
          Ignore
        </ActionButton>
        <ActionButton action={dismiss} title="Forget this request until the device asks again">
          Dismiss
        </ActionButton>
      </div>
    </article>
  );
}

function PendingFolder(props: {
  folder: string;
  device: string;
  label: string;
  time: string;
  onAdd: () => void;
}) {
  const from = deviceName(props.device);
  const label = props.label || props.folder;
  const existing = config.value?.folders.find((folder) => folder.id === props.folder);
  const dismiss = async () => {
    await del('/rest/cluster/pending/folders', { folder: props.folder, device: props.device });
    await refreshPending();
  };
  // As Syncthing's GUI: an ignored folder goes into the offering device's ignoredFolders, and is then
  // no longer listed (the service drops it).
  const ignore = async () => {
    const device = config.value?.devices.find((entry) => entry.deviceID === props.device);
    const ignoredFolders = [
      ...(device?.ignoredFolders ?? []).filter((entry) => entry.id !== props.folder),
      { time: new Date().toISOString(), id: props.folder, label: props.label },
    ];
    await patch(`/rest/config/devices/${encodeURIComponent(props.device)}`, { ignoredFolders });
    await Promise.all([refreshConfig(), refreshPending()]);
  };
  // A folder with this ID here already: it only needs sharing with the device.
  const share = async () => {
    if (!existing) return;
    const devices = [
      ...existing.devices,
      { deviceID: props.device, introducedBy: '', encryptionPassword: '' },
    ];
    await put(`/rest/config/folders/${encodeURIComponent(existing.id)}`, { ...existing, devices });
    await Promise.all([refreshConfig(), refreshPending()]);
  };
  return (
    <article class="card notice" aria-label={`Pending folder ${label} from ${from}`}>
      <p>
        <strong>{from}</strong> wants to share folder <strong>{label}</strong> ({props.folder}).{' '}
        {existing && `It is the folder ${existing.label || existing.id} here, not shared with ${from} yet. `}
        <time dateTime={props.time}>{time(props.time)}</time>
      </p>
      <div class="actions">
        {existing ? (
          <ActionButton kind="primary" action={share}>
            Share
          </ActionButton>
        ) : (
          <Button kind="primary" onClick={props.onAdd}>
            Add
          </Button>
        )}
        <ActionButton
          action={ignore}
          title="Never offer this folder from this device again"
          confirm={`Ignore folder ${label} from ${from}? It is not offered again.`}
        >
          Ignore
        </ActionButton>
        <ActionButton action={dismiss} title="Forget this offer until the device offers it again">
          Dismiss
        </ActionButton>
      </div>
    </article>
  );
}
