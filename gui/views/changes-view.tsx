// Recent changes, as Syncthing's Recent Changes dialog: what this device found changed on disk
// (LocalChangeDetected) and what it took from other devices (RemoteChangeDetected), from the disk
// events' own stream (/rest/events/disk). On opening, what the service still holds (since=0, at once);
// then long polls for the next, for as long as the view is shown.
import { useEffect, useState } from 'preact/hooks';
import { get, messageOf } from '../api.ts';
import { time } from '../format.ts';
import { ErrorText, Field } from '../parts/ui.tsx';
import { config, deviceName, myID } from '../store.ts';
import type { SyncdEvent } from '../types.ts';

/** The newest this many are kept. */
const KEPT = 500;
const POLL_SECONDS = 60;
const RETRY_MS = 2_000;

interface Change {
  id: number;
  time: string;
  local: boolean;
  action: string;
  type: string;
  folder: string;
  label: string;
  path: string;
  modifiedBy: string;
}

function changeOf(event: SyncdEvent): Change {
  const data = event.data as Record<string, unknown>;
  const text = (key: string) => (typeof data[key] === 'string' ? (data[key] as string) : '');
  return {
    id: event.id,
    time: event.time,
    local: event.type === 'LocalChangeDetected',
    action: text('action'),
    type: text('type'),
    folder: text('folderID') || text('folder'),
    label: text('label'),
    path: text('path'),
    modifiedBy: text('modifiedBy'),
  };
}

/**
 * Who made a change: `modifiedBy` is a short ID (the first group of the device ID), which a local
 * change of syncd's does not carry (Syncthing's carries our own).
 */
function deviceOf(change: Change): string {
  const own = myID.value;
  if (change.local || change.modifiedBy === '' || own.startsWith(change.modifiedBy)) return 'this device';
  const device = config.value?.devices.find((candidate) => candidate.deviceID.startsWith(change.modifiedBy));
  return device ? deviceName(device.deviceID) : change.modifiedBy;
}

export function ChangesView() {
  const [changes, setChanges] = useState<Change[] | undefined>(undefined);
  const [error, setError] = useState('');
  const [folder, setFolder] = useState('');

  useEffect(() => {
    const stop = new AbortController();
    void (async () => {
      let since = 0;
      let first = true;
      while (!stop.signal.aborted) {
        try {
          const events = await get<SyncdEvent[]>(
            '/rest/events/disk',
            { since, timeout: first ? 0 : POLL_SECONDS },
            stop.signal,
          );
          first = false;
          setError('');
          if (events.length > 0) since = Math.max(since, ...events.map((event) => event.id));
          const fresh = events.map(changeOf).reverse();
          setChanges((was) => [...fresh, ...(was ?? [])].slice(0, KEPT));
        } catch (failure) {
          if (stop.signal.aborted) return;
          setError(messageOf(failure));
          await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
        }
      }
    })();
    return () => stop.abort();
  }, []);

  const folders = config.value?.folders ?? [];
  const shown = (changes ?? []).filter((change) => folder === '' || change.folder === folder);
  return (
    <section class="card" aria-label="Recent changes">
      <header class="view-head">
        <h1>Recent changes</h1>
        <Field label="Folder">
          <select value={folder} onChange={(event) => setFolder(event.currentTarget.value)}>
            <option value="">All folders</option>
            {folders.map((each) => (
              <option key={each.id} value={each.id}>
                {each.label || each.id}
              </option>
            ))}
          </select>
        </Field>
      </header>
      {error && <ErrorText>{error}</ErrorText>}
      {changes === undefined && !error && <p class="loading">Loading…</p>}
      {changes !== undefined && shown.length === 0 && (
        <p class="muted">
          No changes {folder ? 'in this folder ' : ''}since syncd last started. Files added, modified or
          deleted here or by other devices show up as they are found.
        </p>
      )}
      {shown.length > 0 && (
        <table class="stacked changes">
          <thead>
            <tr>
              <th>Time</th>
              <th>Device</th>
              <th>Action</th>
              <th>Type</th>
              <th>Folder</th>
              <th>Path</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((change) => {
              const label =
                folders.find((each) => each.id === change.folder)?.label || change.label || change.folder;
              return (
                <tr key={change.id}>
                  <td data-label="Time">
                    <time dateTime={change.time}>{time(change.time)}</time>
                  </td>
                  <td data-label="Device">{deviceOf(change)}</td>
                  <td data-label="Action">{change.action}</td>
                  <td data-label="Type">{change.type}</td>
                  <td data-label="Folder">{label}</td>
                  <td data-label="Path">
                    <code>{change.path}</code>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}
