// Add or edit a device, as Syncthing's device dialog: its ID checked by the service while it is typed
// (GET /rest/svc/deviceid, as Syncthing's GUI does), with the devices discovery knows and those asking
// to connect offered; its name, addresses, compression, introducer, auto accept, pause, and the
// folders shared with it (each folder's device list). A new device starts from the defaults
// (GET /rest/config/defaults/device), as in Syncthing.
import { useEffect, useRef, useState } from 'preact/hooks';
import { get, messageOf, patch, post } from '../api.ts';
import { shortId } from '../format.ts';
import { Check, ErrorText, Field, Modal, SaveCancel } from '../parts/ui.tsx';
import { config, myID, pendingDevices, refreshConfig } from '../store.ts';
import type { DeviceConfiguration, FolderConfiguration } from '../types.ts';

const CHECK_DELAY_MS = 300;

interface Check {
  checking?: boolean;
  id?: string;
  error?: string;
}

interface Suggestion {
  id: string;
  name: string;
  address: string;
  asking: boolean;
}

export function DeviceEditor(props: {
  /** The device to edit; a new one without it. */
  device?: DeviceConfiguration;
  /** For a new device: the ID and name to start with (a pending device's). */
  /** A device asking to connect: its ID and name, and where it connected from. */
  prefill?: { deviceID: string; name: string; address?: string };
  onClose: () => void;
}) {
  const isNew = !props.device;
  const [base, setBase] = useState<DeviceConfiguration | undefined>(props.device);
  const [loadError, setLoadError] = useState('');
  const [idText, setIdText] = useState(props.prefill?.deviceID ?? '');
  const [check, setCheck] = useState<Check>({});
  const [name, setName] = useState(props.device?.name ?? props.prefill?.name ?? '');
  const [addresses, setAddresses] = useState((props.device?.addresses ?? ['dynamic']).join(', '));
  const [compression, setCompression] = useState(props.device?.compression ?? 'metadata');
  const [introducer, setIntroducer] = useState(props.device?.introducer ?? false);
  const [autoAccept, setAutoAccept] = useState(props.device?.autoAcceptFolders ?? false);
  const [paused, setPaused] = useState(props.device?.paused ?? false);
  // The fields the user changed, which the defaults, arriving later, leave alone.
  const touched = useRef(new Set<string>());
  const touch = <T,>(field: string, set: (value: T) => void, value: T) => {
    touched.current.add(field);
    set(value);
  };
  const folders = config.value?.folders ?? [];
  const [shared, setShared] = useState(
    () =>
      new Set(
        folders
          .filter((folder) => folder.devices.some((entry) => entry.deviceID === props.device?.deviceID))
          .map((folder) => folder.id),
      ),
  );
  const [saving, setSaving] = useState(false);
  const [saveError, setSaveError] = useState('');

  // A new device: the defaults' values in the fields, until the user changes them.
  useEffect(() => {
    if (!isNew) return;
    get<DeviceConfiguration>('/rest/config/defaults/device')
      .then((defaults) => {
        setBase(defaults);
        // Where a device asking to connect came from is where it listens (Syncthing dials from its
        // listening port): dialed back at once, with discovery off as syncd has it by default.
        const seen = props.prefill?.address ? [`tcp://${props.prefill.address}`] : [];
        // What was changed before the defaults came stays as it was changed.
        const fresh = (field: string) => !touched.current.has(field);
        if (fresh('addresses')) setAddresses([...seen, ...defaults.addresses].join(', ') || 'dynamic');
        if (fresh('compression')) setCompression(defaults.compression);
        if (fresh('introducer')) setIntroducer(defaults.introducer);
        if (fresh('autoAccept')) setAutoAccept(defaults.autoAcceptFolders);
        if (fresh('paused')) setPaused(defaults.paused);
      })
      .catch((error: unknown) => setLoadError(messageOf(error)));
  }, []);

  // The ID as typed, checked once typing pauses; an answer for older text is dropped.
  useEffect(() => {
    if (!isNew) return;
    const text = idText.trim();
    if (text === '') {
      setCheck({});
      return;
    }
    setCheck({ checking: true });
    const controller = new AbortController();
    const timer = setTimeout(() => {
      get<{ id?: string; error?: string }>('/rest/svc/deviceid', { id: text }, controller.signal)
        .then((answer) => {
          if (answer.error || !answer.id) return setCheck({ error: answer.error ?? 'not a device ID' });
          if (answer.id === myID.value) return setCheck({ error: "This is this device's own ID." });
          const known = config.value?.devices.find((device) => device.deviceID === answer.id);
          if (known)
            return setCheck({
              error: `A device with this ID is added already: ${known.name || shortId(answer.id)}.`,
            });
          setCheck({ id: answer.id });
        })
        .catch((error: unknown) => {
          if (!controller.signal.aborted) setCheck({ error: messageOf(error) });
        });
    }, CHECK_DELAY_MS);
    return () => {
      clearTimeout(timer);
      controller.abort();
    };
  }, [idText]);

  const save = async () => {
    if (!base) return;
    const deviceID = isNew ? check.id : props.device?.deviceID;
    if (!deviceID) return;
    setSaving(true);
    setSaveError('');
    try {
      // Only what this dialog edits is sent for a device that exists (PATCH), and each folder's device
      // list is edited as it is now: a change made elsewhere while the dialog was open is kept.
      const edited = {
        name: name.trim(),
        addresses: addresses.split(/[\s,]+/).filter(Boolean),
        compression,
        introducer,
        autoAcceptFolders: autoAccept,
        paused,
      };
      if (edited.addresses.length === 0) edited.addresses = ['dynamic'];
      const path = `/rest/config/devices/${encodeURIComponent(deviceID)}`;
      if (isNew) await post('/rest/config/devices', { ...base, ...edited, deviceID });
      else await patch(path, edited);
      for (const { id } of config.value?.folders ?? []) {
        const folderPath = `/rest/config/folders/${encodeURIComponent(id)}`;
        const folder = await get<FolderConfiguration>(folderPath);
        const has = folder.devices.some((entry) => entry.deviceID === deviceID);
        if (has === shared.has(id)) continue;
        const devices = has
          ? folder.devices.filter((entry) => entry.deviceID !== deviceID)
          : [...folder.devices, { deviceID, introducedBy: '', encryptionPassword: '' }];
        await patch(folderPath, { devices });
      }
      await refreshConfig();
      props.onClose();
    } catch (error) {
      setSaveError(messageOf(error));
    } finally {
      setSaving(false);
    }
  };

  const title = isNew
    ? 'Add device'
    : `Edit device ${props.device?.name || shortId(props.device?.deviceID ?? '')}`;
  const ready = Boolean(base) && !saving && (!isNew || Boolean(check.id));
  // Syncthing acts on autoAcceptFolders under the default folder path only: without one it cannot.
  const defaultPath = config.value?.defaults.folder.path ?? '';
  return (
    <Modal title={title} onClose={props.onClose}>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          if (ready) void save();
        }}
      >
        {loadError && <ErrorText>{loadError}</ErrorText>}
        {isNew ? (
          <>
            <Field label="Device ID" error={check.error} hint={idHint(check, idText)}>
              <input
                value={idText}
                onInput={(event) => setIdText(event.currentTarget.value)}
                placeholder="XXXXXXX-XXXXXXX-XXXXXXX-XXXXXXX-XXXXXXX-XXXXXXX-XXXXXXX-XXXXXXX"
                autocomplete="off"
                spellcheck={false}
                class="device-id"
              />
            </Field>
            <Suggestions
              current={check.id}
              onPick={(suggestion) => {
                setIdText(suggestion.id);
                if (!name.trim() && suggestion.name) setName(suggestion.name);
              }}
            />
          </>
        ) : (
          <div class="field">
            <span class="label">Device ID</span>
            <code class="device-id">{props.device?.deviceID}</code>
          </div>
        )}
        <Field
          label="Device name"
          hint="Shown instead of the ID here; left empty, the name the device gives itself."
        >
          <input value={name} onInput={(event) => setName(event.currentTarget.value)} />
        </Field>
        <Field
          label="Addresses"
          hint='"dynamic" to find the device by discovery, or addresses separated by commas: tcp://192.0.2.7:22000, tcp://laptop.lan:22000'
        >
          <input
            value={addresses}
            onInput={(event) => touch('addresses', setAddresses, event.currentTarget.value)}
          />
        </Field>
        <Field label="Compression">
          <select
            value={compression}
            onChange={(event) => touch('compression', setCompression, event.currentTarget.value)}
          >
            <option value="metadata">Metadata only</option>
            <option value="always">All data</option>
            <option value="never">Off</option>
          </select>
        </Field>
        <Check
          label="Introducer"
          checked={introducer}
          onChange={(checked) => touch('introducer', setIntroducer, checked)}
          hint="Devices the introducer shares folders with are added here, for the folders shared with both."
        />
        <Check
          label="Auto accept folders"
          checked={autoAccept}
          disabled={!defaultPath && !autoAccept}
          onChange={(checked) => touch('autoAccept', setAutoAccept, checked)}
          hint={
            defaultPath
              ? `Folders the device offers are added under ${defaultPath} without asking.`
              : 'Needs a default folder path (Settings) to add the folders the device offers under it.'
          }
        />
        <Check label="Paused" checked={paused} onChange={(checked) => touch('paused', setPaused, checked)} />
        <fieldset class="share">
          <legend>Share folders</legend>
          {folders.length === 0 && <p class="hint">No folder yet.</p>}
          {folders.map((folder) => (
            <label class="check" key={folder.id}>
              <input
                type="checkbox"
                checked={shared.has(folder.id)}
                onChange={(event) => {
                  const next = new Set(shared);
                  if (event.currentTarget.checked) next.add(folder.id);
                  else next.delete(folder.id);
                  setShared(next);
                }}
              />
              {folder.label || folder.id}
              {folder.label && <span class="muted">({folder.id})</span>}
            </label>
          ))}
        </fieldset>
        <SaveCancel disabled={!ready} error={saveError} onCancel={props.onClose} />
      </form>
    </Modal>
  );
}

function idHint(check: Check, text: string): string | undefined {
  if (check.error) return undefined;
  if (check.id) return check.id === text.trim() ? 'A valid device ID.' : `A valid device ID: ${check.id}`;
  if (check.checking) return 'Checking…';
  return 'The ID the other device shows under "Show ID".';
}

/**
 * The devices this one could add: those discovery has found (GET /rest/system/discovery) and those that
 * asked to connect (pending), but not the configured ones, as Syncthing's GUI offers them.
 */
function Suggestions(props: { current?: string; onPick: (suggestion: Suggestion) => void }) {
  const [discovered, setDiscovered] = useState<Record<string, { addresses: string[] }>>({});
  const [error, setError] = useState('');
  useEffect(() => {
    get<Record<string, { addresses: string[] }>>('/rest/system/discovery')
      .then(setDiscovered)
      .catch((failure: unknown) => setError(messageOf(failure)));
  }, []);
  const configured = new Set((config.value?.devices ?? []).map((device) => device.deviceID));
  const byId = new Map<string, Suggestion>();
  for (const [id, entry] of Object.entries(discovered)) {
    byId.set(id, { id, name: '', address: entry.addresses[0] ?? '', asking: false });
  }
  for (const [id, entry] of Object.entries(pendingDevices.value)) {
    byId.set(id, { id, name: entry.name, address: entry.address, asking: true });
  }
  const list = [...byId.values()].filter(
    (suggestion) =>
      !configured.has(suggestion.id) && suggestion.id !== myID.value && suggestion.id !== props.current,
  );
  if (error) return <p class="error-text">Discovery: {error}</p>;
  if (list.length === 0) return null;
  return (
    <div class="suggestions" role="group" aria-label="Nearby / asking to connect">
      <span class="label">Nearby / asking to connect</span>
      <ul>
        {list.map((suggestion) => (
          <li key={suggestion.id}>
            <button type="button" class="suggestion" onClick={() => props.onPick(suggestion)}>
              <strong>{suggestion.name || shortId(suggestion.id)}</strong>{' '}
              <span class="muted">
                {suggestion.asking ? 'asking to connect' : 'nearby'}
                {suggestion.address && ` from ${suggestion.address}`}
              </span>
              <code class="device-id">{suggestion.id}</code>
            </button>
          </li>
        ))}
      </ul>
    </div>
  );
}
