// A folder's conflict copies beside the files they are copies of. When a file changed on two devices
// before they synced, Syncthing keeps the version that lost as NAME.sync-conflict-YYYYMMDD-HHMMSS-
// DEVICE.EXT, DEVICE the short ID of the device whose version won (folder_sendrecv.go conflictName).
// They come from syncd's own GET /rest/syncd/conflicts, which sifts the index for them: reading the
// whole tree (/rest/db/browse) costs a large folder seconds and megabytes. Nothing here changes a file.
import { useEffect, useState } from 'preact/hooks';
import { get, messageOf } from '../api.ts';
import { bytes, count, time } from '../format.ts';
import { ActionButton, Button, ErrorText, Modal } from '../parts/ui.tsx';
import { config, myID } from '../store.ts';
import type { ConflictCopies, FolderConfiguration } from '../types.ts';

type Conflicts = ConflictCopies;
type Conflict = Conflicts['conflicts'][number];
type Copy = Conflict['copies'][number];

export function ConflictsDialog(props: { folder: FolderConfiguration; onClose: () => void }) {
  const id = props.folder.id;
  const [answer, setAnswer] = useState<Conflicts>();
  const [error, setError] = useState('');
  const load = async () => {
    try {
      setAnswer(await get<Conflicts>('/rest/syncd/conflicts', { folder: id }));
      setError('');
    } catch (failure) {
      setError(messageOf(failure));
    }
  };
  useEffect(() => void load(), [id]);

  const copies = answer?.conflicts.reduce((sum, conflict) => sum + conflict.copies.length, 0) ?? 0;
  return (
    <Modal title="Conflicts" onClose={props.onClose} wide>
      <p class="muted">{props.folder.label || id}</p>
      <p class="hint">
        When a file changes on two devices before they sync, the change that lost is kept beside the file as a
        conflict copy. Compare them, keep what you want in the file, then delete the copy in the folder: syncd
        changes neither.
      </p>
      {error && <ErrorText>{error}</ErrorText>}
      {!answer && !error && <p class="loading">Loading…</p>}
      {answer && answer.conflicts.length === 0 && <p>No conflicts: the folder has no conflict copies.</p>}
      {answer && answer.conflicts.length > 0 && (
        <p>
          {count(copies)} conflict {copies === 1 ? 'copy' : 'copies'} of {count(answer.conflicts.length)}{' '}
          {answer.conflicts.length === 1 ? 'file' : 'files'}
          {answer.truncated && ': the first ones only, there are more'}
        </p>
      )}
      {answer?.conflicts
        .toSorted((a, b) => a.original.localeCompare(b.original))
        .map((conflict) => (
          <ConflictEntry key={conflict.original} conflict={conflict} />
        ))}
      <div class="actions">
        <ActionButton action={load}>Refresh</ActionButton>
      </div>
    </Modal>
  );
}

function ConflictEntry(props: { conflict: Conflict }) {
  const { original, current, copies } = props.conflict;
  return (
    <section class="conflict" aria-label={original}>
      <h3>{original}</h3>
      <p class="muted">
        {current
          ? `The file now: ${bytes(current.size)}, modified ${time(current.modified)}`
          : 'Not in the folder any more: deleted or renamed since.'}
      </p>
      <ul class="file-list">
        {copies.map((copy) => (
          <CopyEntry key={copy.name} copy={copy} current={current} original={original} />
        ))}
      </ul>
    </section>
  );
}

function CopyEntry(props: { copy: Copy; current: Conflict['current']; original: string }) {
  const { copy, current } = props;
  const [shown, setShown] = useState(false);
  return (
    <li aria-label={copy.name}>
      <span class="path">
        Copy of {stampOf(copy.name)}
        <span class="muted">
          {copy.device && ` · won by ${winnerName(copy.device)}`} · {bytes(copy.size)}
        </span>
      </span>
      <Button aria-expanded={shown} onClick={() => setShown(!shown)}>
        {shown ? 'Hide' : 'Show'}
      </Button>
      {shown && (
        <div class="compare">
          <table>
            <thead>
              <tr>
                <th />
                <th scope="col">The file</th>
                <th scope="col">Conflict copy</th>
              </tr>
            </thead>
            <tbody>
              <tr>
                <th scope="row">Name</th>
                <td>{props.original}</td>
                <td>{copy.name}</td>
              </tr>
              <tr>
                <th scope="row">Size</th>
                <td>{current ? bytes(current.size) : 'gone'}</td>
                <td>{bytes(copy.size)}</td>
              </tr>
              <tr>
                <th scope="row">Modified</th>
                <td>{current ? time(current.modified) : 'gone'}</td>
                <td>{time(copy.modified)}</td>
              </tr>
            </tbody>
          </table>
        </div>
      )}
    </li>
  );
}

/** The time in a copy's name (the local time of the device that made it), as this browser writes times. */
function stampOf(name: string): string {
  const parts = /\.sync-conflict-(\d{4})(\d\d)(\d\d)-(\d\d)(\d\d)(\d\d)/.exec(name);
  if (!parts) return 'an unknown time';
  const [year, month, day, hour, minute, second] = parts.slice(1).map(Number) as number[];
  return new Date(year ?? 0, (month ?? 1) - 1, day, hour, minute, second).toLocaleString();
}

/** The configured device whose short ID the copy's name ends with, by its name. */
function winnerName(short: string): string {
  const device = config.value?.devices.find((candidate) => candidate.deviceID.startsWith(`${short}-`));
  if (!device) return short;
  const name = device.name || short;
  return device.deviceID === myID.value ? `${name} (this device)` : name;
}
