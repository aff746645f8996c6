// The dialog that adds or edits a folder, as Syncthing's folder dialog with its tabs: General (ID,
// label, path, type, rescans), Sharing, File versioning and Ignore patterns. Saving sends the whole
// folder (a new one starts from the configuration's defaults for folders), then its ignore patterns;
// what the service refuses is shown beside Save in its words, and the dialog stays open.
import { useEffect, useState } from 'preact/hooks';
import { get, messageOf, patch, post } from '../api.ts';
import { Field, Modal, SaveCancel, Tabs } from '../parts/ui.tsx';
import { config, deviceName, myID, otherDevices, refreshConfig } from '../store.ts';
import type { FolderConfiguration } from '../types.ts';
import { IgnoresField, ignoreLines } from './folder-ignores.tsx';
import { folderName } from './folder-state.ts';
import { VersioningFields } from './folder-versioning.tsx';

const TABS = ['General', 'Sharing', 'File versioning', 'Ignore patterns'] as const;
type Tab = (typeof TABS)[number];

export function FolderEditor(props: { folder?: FolderConfiguration; onClose: () => void }) {
  // A new folder is made once saved; a second Save (its ignore patterns refused) edits it.
  const [created, setCreated] = useState(false);
  const adding = !props.folder && !created;
  const [tab, setTab] = useState<Tab>('General');
  const [edits, setEdits] = useState<Partial<FolderConfiguration>>({});
  const [draft, setDraft] = useState<FolderConfiguration | undefined>(
    props.folder && structuredClone(props.folder),
  );
  const [defaultPath, setDefaultPath] = useState('');
  const [pathTyped, setPathTyped] = useState(false);
  const [ignores, setIgnores] = useState('');
  // The patterns as read, to write them only when changed; undefined while unknown (not read yet).
  const [ignoresRead, setIgnoresRead] = useState<string>();
  const [ignoresError, setIgnoresError] = useState('');
  const [loadError, setLoadError] = useState('');
  const [saving, setSaving] = useState(false);
  const [saveError, setSaveError] = useState('');

  useEffect(() => {
    if (props.folder) {
      get<{ ignore: string[] | null }>('/rest/db/ignores', { folder: props.folder.id }).then(
        (answer) => {
          const text = (answer.ignore ?? []).map((line) => `${line}\n`).join('');
          setIgnores(text);
          setIgnoresRead(text);
        },
        (error: unknown) => setIgnoresError(messageOf(error)),
      );
      return;
    }
    // A new folder: the defaults, a random ID formatted as Syncthing's GUI makes it (xxxxx-xxxxx),
    // and the default ignore patterns.
    Promise.all([
      get<FolderConfiguration>('/rest/config/defaults/folder'),
      get<{ random: string }>('/rest/svc/random/string', { length: 10 }),
      get<{ lines: string[] | null }>('/rest/config/defaults/ignores'),
    ]).then(
      ([defaults, { random }, defaultIgnores]) => {
        const id = `${random.slice(0, 5)}-${random.slice(5, 10)}`.toLowerCase();
        setDraft({ ...defaults, id });
        setDefaultPath(defaults.path);
        setIgnores((defaultIgnores.lines ?? []).map((line) => `${line}\n`).join(''));
        setIgnoresRead('');
      },
      (error: unknown) => setLoadError(messageOf(error)),
    );
  }, [props.folder?.id]);

  const title = props.folder ? `Edit folder ${folderName(props.folder)}` : 'Add folder';
  if (!draft) {
    return (
      <Modal title={title} onClose={props.onClose}>
        {loadError ? (
          <p class="error-text" role="alert">
            {loadError}
          </p>
        ) : (
          <p class="loading">Loading…</p>
        )}
      </Modal>
    );
  }

  // What this dialog changed, which is all a save of an existing folder sends (PATCH): a change made
  // elsewhere while it was open (a pause, a device shared) is kept.
  const change = (fields: Partial<FolderConfiguration>) => {
    setDraft((current) => current && { ...current, ...fields });
    setEdits((current) => ({ ...current, ...fields }));
  };
  // Syncthing's GUI proposes the default path joined with the label until a path is typed.
  const setLabel = (label: string) =>
    change({
      label,
      ...(adding && !pathTyped && defaultPath && label ? { path: joinPath(defaultPath, label) } : {}),
    });
  const shared = new Set(draft.devices.map((device) => device.deviceID));
  const share = (deviceID: string, on: boolean) =>
    change({
      devices: on
        ? [...draft.devices, { deviceID, introducedBy: '', encryptionPassword: '' }]
        : draft.devices.filter((device) => device.deviceID !== deviceID),
    });

  const save = async () => {
    // POST /rest/config/folders replaces a folder of the same ID: Syncthing's dialog refuses it first.
    const taken = adding && config.value?.folders.find((folder) => folder.id === draft.id);
    if (taken) {
      setSaveError(`The folder ID must be unique: "${draft.id}" is the ID of ${folderName(taken)} already.`);
      return;
    }
    setSaving(true);
    setSaveError('');
    try {
      const lines = ignoreLines(ignores);
      const writeIgnores = ignoresRead !== undefined && ignores !== ignoresRead;
      const id = encodeURIComponent(draft.id);
      // As Syncthing's GUI: a new folder given patterns is added paused, so that its first scan
      // sees them, and resumed once they are written.
      const hold = !props.folder && writeIgnores && lines.length > 0 && !draft.paused;
      const folder = { ...draft, paused: draft.paused || hold };
      if (adding) {
        await post('/rest/config/folders', folder);
        setCreated(true);
      } else if (Object.keys(edits).length > 0) await patch(`/rest/config/folders/${id}`, edits);
      if (writeIgnores) {
        await post('/rest/db/ignores', { ignore: lines }, { folder: draft.id });
        setIgnoresRead(ignores);
      }
      if (hold) await patch(`/rest/config/folders/${id}`, { paused: false });
      await refreshConfig().catch(() => undefined);
      props.onClose();
    } catch (error) {
      setSaveError(messageOf(error));
    } finally {
      setSaving(false);
    }
  };

  return (
    <Modal title={title} onClose={props.onClose} wide>
      <Tabs tabs={TABS} current={tab} onPick={setTab} />
      <div role="tabpanel">
        {tab === 'General' && (
          <>
            <Field
              label="Folder label"
              hint="A name for the folder here; other devices may name it otherwise."
            >
              <input value={draft.label} onInput={(event) => setLabel(event.currentTarget.value)} />
            </Field>
            {adding ? (
              <Field label="Folder ID" hint="The same on every device that shares the folder.">
                <input
                  value={draft.id}
                  required
                  onInput={(event) => change({ id: event.currentTarget.value.trim() })}
                />
              </Field>
            ) : (
              <p>
                <span class="muted">Folder ID</span> <code>{draft.id}</code>
              </p>
            )}
            <PathField
              value={draft.path}
              onInput={(path) => {
                setPathTyped(true);
                change({ path });
              }}
            />
            <Field label="Folder type">
              <select value={draft.type} onChange={(event) => change({ type: event.currentTarget.value })}>
                <option value="sendreceive">Send & receive</option>
                <option value="sendonly">Send only</option>
                <option value="receiveonly">Receive only</option>
              </select>
            </Field>
            <Field label="Full rescan interval (s)" hint="0: only the watcher and requests start scans.">
              <input
                type="number"
                min={0}
                value={draft.rescanIntervalS}
                onInput={(event) => change({ rescanIntervalS: Number(event.currentTarget.value) })}
              />
            </Field>
            <label class="check">
              <input
                type="checkbox"
                checked={draft.fsWatcherEnabled}
                onChange={(event) => change({ fsWatcherEnabled: event.currentTarget.checked })}
              />
              Watch for changes
            </label>
          </>
        )}
        {tab === 'Sharing' && (
          <fieldset class="plain">
            <legend>Share with</legend>
            {otherDevices.value.length === 0 && <p class="muted">No other devices yet: add one first.</p>}
            {otherDevices.value.map((device) => (
              <label class="check" key={device.deviceID}>
                <input
                  type="checkbox"
                  checked={shared.has(device.deviceID)}
                  onChange={(event) => share(device.deviceID, event.currentTarget.checked)}
                />
                {deviceName(device.deviceID)}
              </label>
            ))}
            {draft.devices
              .filter(
                (device) =>
                  device.deviceID !== myID.value &&
                  !config.value?.devices.some((known) => known.deviceID === device.deviceID),
              )
              .map((device) => (
                <p class="muted" key={device.deviceID}>
                  Shared with {device.deviceID}, which is not a configured device.
                </p>
              ))}
          </fieldset>
        )}
        {tab === 'File versioning' && (
          <VersioningFields value={draft.versioning} onChange={(versioning) => change({ versioning })} />
        )}
        {tab === 'Ignore patterns' && (
          <IgnoresField
            folderId={adding ? undefined : draft.id}
            text={ignores}
            onInput={setIgnores}
            error={ignoresError}
            disabled={ignoresRead === undefined}
          />
        )}
      </div>
      <SaveCancel disabled={saving} error={saveError} onCancel={props.onClose} onSave={save} />
    </Modal>
  );
}

// The path, with the directories below what is typed offered as completions (GET
// /rest/system/browse, as Syncthing's dialog completes it).
function PathField(props: { value: string; onInput: (path: string) => void }) {
  const [options, setOptions] = useState<string[]>([]);
  const { value } = props;
  useEffect(() => {
    if (value === '') {
      setOptions([]);
      return;
    }
    const abort = new AbortController();
    const timer = setTimeout(() => {
      get<string[]>('/rest/system/browse', { current: value }, abort.signal).then(setOptions, () =>
        setOptions([]),
      );
    }, 200);
    return () => {
      clearTimeout(timer);
      abort.abort();
    };
  }, [value]);
  return (
    <Field label="Folder path" hint="The directory on this device; ~ is the home directory.">
      <input
        value={value}
        list="folder-path-options"
        autocomplete="off"
        spellcheck={false}
        onInput={(event) => props.onInput(event.currentTarget.value)}
      />
      <datalist id="folder-path-options">
        {options.map((option) => (
          <option value={option} key={option} />
        ))}
      </datalist>
    </Field>
  );
}

function joinPath(base: string, name: string): string {
  return base.endsWith('/') ? `${base}${name}` : `${base}/${name}`;
}
