// Adds a folder another device offers, as Syncthing's GUI does from its notice: the offer's ID and
// label kept, the path the default folder path joined with the label (or the ID), shared with the
// device that offers it; everything else from the defaults (GET /rest/config/defaults/folder).
import { useEffect, useState } from 'preact/hooks';
import { get, messageOf, post } from '../api.ts';
import { isOneName, sanitizePath } from '../../shared/sanitize-path.ts';
import { ErrorText, Field, Modal, SaveCancel } from '../parts/ui.tsx';
import { deviceName, refreshConfig } from '../store.ts';
import type { FolderConfiguration } from '../types.ts';

export function AcceptFolder(props: { folder: string; label: string; device: string; onClose: () => void }) {
  const [defaults, setDefaults] = useState<FolderConfiguration | undefined>(undefined);
  const [path, setPath] = useState('');
  const [loadError, setLoadError] = useState('');
  const [saving, setSaving] = useState(false);
  const [saveError, setSaveError] = useState('');

  useEffect(() => {
    get<FolderConfiguration>('/rest/config/defaults/folder')
      .then((answer) => {
        setDefaults(answer);
        // A path typed before the defaults came stays: only an empty field is filled in.
        setPath((typed) => typed || joinPath(answer.path, [props.label, props.folder]));
      })
      .catch((error: unknown) => setLoadError(messageOf(error)));
  }, []);

  const save = async () => {
    if (!defaults) return;
    setSaving(true);
    setSaveError('');
    try {
      const devices = defaults.devices.filter((entry) => entry.deviceID !== props.device);
      devices.push({ deviceID: props.device, introducedBy: '', encryptionPassword: '' });
      await post('/rest/config/folders', {
        ...defaults,
        id: props.folder,
        label: props.label,
        path: path.trim(),
        devices,
      });
      await refreshConfig();
      props.onClose();
    } catch (error) {
      setSaveError(messageOf(error));
    } finally {
      setSaving(false);
    }
  };

  const ready = Boolean(defaults) && path.trim() !== '' && !saving;
  return (
    <Modal title="Accept folder" onClose={props.onClose}>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          if (ready) void save();
        }}
      >
        {loadError && <ErrorText>{loadError}</ErrorText>}
        <p>
          Shared by {deviceName(props.device)}: this device keeps a copy of the folder at the path below, and
          syncs it with {deviceName(props.device)}.
        </p>
        <Field label="Folder ID">
          <input value={props.folder} readOnly />
        </Field>
        <Field label="Folder label">
          <input value={props.label} readOnly />
        </Field>
        <Field label="Folder path" hint="Where the folder is kept here; created if it is not there.">
          <input value={path} onInput={(event) => setPath(event.currentTarget.value)} spellcheck={false} />
        </Field>
        <SaveCancel disabled={!ready} error={saveError} onCancel={props.onClose} />
      </form>
    </Modal>
  );
}

// The default path joined with the first of the offered label and ID that makes one name, made as
// Syncthing makes it (lib/fs/util.go SanitizePath, as auto-accept does): a device's text never names a
// path above the default one. No default path, or no such name: none, for the user to give.
function joinPath(base: string, offered: string[]): string {
  const name = offered.map(sanitizePath).find(isOneName);
  if (!base || !name) return '';
  const separator = base.includes('\\') && !base.includes('/') ? '\\' : '/';
  return base.endsWith(separator) ? `${base}${name}` : `${base}${separator}${name}`;
}
