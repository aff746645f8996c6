// The versions a folder's versioning keeps, and their restore, as Syncthing's "Restore Versions"
// dialog offers them: GET /rest/folder/versions lists them by file; POST the same with
// {"NAME": "versionTime"} puts the versions picked back, and answers the files that failed, with why.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { get, messageOf, post } from '../api.ts';
import { bytes, count, time } from '../format.ts';
import { ActionButton, ErrorText, Field, Modal } from '../parts/ui.tsx';
import type { FolderConfiguration } from '../types.ts';

interface FileVersion {
  versionTime: string;
  modTime: string;
  size: number;
}

// Files shown at once: a folder may keep versions of thousands; the filter finds the others.
const SHOWN_FILES = 200;

export function VersionsDialog(props: { folder: FolderConfiguration; onClose: () => void }) {
  const { folder } = props;
  return (
    <Modal title="Versions" onClose={props.onClose} wide>
      <p class="muted">{folder.label || folder.id}</p>
      {folder.versioning.type === '' ? (
        <p>
          Versioning is off for this folder, so no earlier versions of its files are kept. To keep them, turn
          it on in Edit folder › Versioning; versions are kept from then on.
        </p>
      ) : folder.versioning.type === 'external' ? (
        <p>
          This folder's versioning is external: its command keeps the versions where it puts them, and they
          cannot be listed or restored here.
        </p>
      ) : folder.paused ? (
        <p>The folder is paused: resume it to see its versions.</p>
      ) : (
        <VersionList folder={folder.id} />
      )}
    </Modal>
  );
}

function VersionList(props: { folder: string }) {
  const [versions, setVersions] = useState<Record<string, FileVersion[]>>();
  const [error, setError] = useState('');
  const [filter, setFilter] = useState('');
  /** The versions picked: file name → versionTime (one version per file, as the restore takes them). */
  const [picked, setPicked] = useState<Record<string, string>>({});
  const [outcome, setOutcome] = useState<{ restored: string[]; failed: Array<[string, string]> }>();

  const load = async () => {
    try {
      setVersions(
        await get<Record<string, FileVersion[]>>('/rest/folder/versions', { folder: props.folder }),
      );
      setError('');
    } catch (failure) {
      setError(messageOf(failure));
    }
  };
  useEffect(() => void load(), [props.folder]);

  const names = useMemo(() => {
    const needle = filter.trim().toLowerCase();
    return Object.keys(versions ?? {})
      .filter((name) => name.toLowerCase().includes(needle))
      .sort();
  }, [versions, filter]);

  const restore = async () => {
    const answer = await post<Record<string, string> | null>('/rest/folder/versions', picked, {
      folder: props.folder,
    });
    const failed = Object.entries(answer ?? {});
    setOutcome({ restored: Object.keys(picked).filter((name) => !answer?.[name]), failed });
    setPicked({});
    await load();
  };

  const pickedCount = Object.keys(picked).length;
  if (error) return <ErrorText>{error}</ErrorText>;
  if (!versions) return <p class="loading">Loading…</p>;
  const total = Object.keys(versions).length;
  if (total === 0) {
    return (
      <>
        {outcome && <Outcome {...outcome} />}
        <p>
          No versions kept yet: a file's earlier versions appear here once another device changes or deletes
          it.
        </p>
      </>
    );
  }
  return (
    <>
      <p class="hint">
        Restoring puts the version picked back in place of the file; as versioning is on, the file there now
        is kept as a version in turn. A deleted file comes back the same way.
      </p>
      <Field label="Filter">
        <input
          type="search"
          value={filter}
          placeholder="Part of a file's path"
          onInput={(event) => setFilter(event.currentTarget.value)}
        />
      </Field>
      {outcome && <Outcome {...outcome} />}
      {names.length === 0 && total > 0 && <p>No file's path contains “{filter}”.</p>}
      <DirectoryTree
        names={names.slice(0, SHOWN_FILES)}
        versions={versions}
        picked={picked}
        onPick={(name, versionTime) => {
          const next = { ...picked };
          if (next[name] === versionTime) delete next[name];
          else next[name] = versionTime;
          setPicked(next);
        }}
      />
      {names.length > SHOWN_FILES && (
        <p class="muted">
          {count(SHOWN_FILES)} of {count(names.length)} files shown: narrow the filter to see the others.
        </p>
      )}
      <div class="actions sticky-actions">
        {pickedCount > 0 && (
          <ActionButton kind="primary" action={restore}>
            Restore
          </ActionButton>
        )}
        <span class="muted">
          {pickedCount === 0
            ? 'Pick the versions to restore: one for each file.'
            : `${count(pickedCount)} ${pickedCount === 1 ? 'version' : 'versions'} picked`}
        </span>
      </div>
    </>
  );
}

/** The files by directory, each with its versions newest first, one of them to pick. */
function DirectoryTree(props: {
  names: string[];
  versions: Record<string, FileVersion[]>;
  picked: Record<string, string>;
  onPick: (name: string, versionTime: string) => void;
}) {
  const directories = new Map<string, string[]>();
  for (const name of props.names) {
    const slash = name.lastIndexOf('/');
    const directory = slash < 0 ? '' : name.slice(0, slash);
    directories.set(directory, [...(directories.get(directory) ?? []), name]);
  }
  return (
    <>
      {[...directories]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([directory, names]) => (
          <section key={directory} class="version-directory" aria-label={directory || 'Top of the folder'}>
            <h3>{directory ? `${directory}/` : 'Top of the folder'}</h3>
            {names.map((name) => {
              const list = [...(props.versions[name] ?? [])].sort(
                (a, b) => Date.parse(b.versionTime) - Date.parse(a.versionTime),
              );
              return (
                <fieldset key={name} class="versions">
                  <legend>{name.slice(directory ? directory.length + 1 : 0)}</legend>
                  {list.map((version) => (
                    <label class="check" key={version.versionTime}>
                      <input
                        type="checkbox"
                        checked={props.picked[name] === version.versionTime}
                        onChange={() => props.onPick(name, version.versionTime)}
                      />
                      <span>
                        {time(version.versionTime)}{' '}
                        <span class="muted">
                          · {bytes(version.size)} · modified {time(version.modTime)}
                        </span>
                      </span>
                    </label>
                  ))}
                </fieldset>
              );
            })}
          </section>
        ))}
    </>
  );
}

function Outcome(props: { restored: string[]; failed: Array<[string, string]> }) {
  return (
    <div role="status" class="restore-outcome">
      {props.restored.length > 0 && (
        <p>
          Restored {count(props.restored.length)} {props.restored.length === 1 ? 'file' : 'files'}:{' '}
          {props.restored.join(', ')}
        </p>
      )}
      {props.failed.length > 0 && <p class="error-text">Not restored:</p>}
      {props.failed.length > 0 && (
        <ul class="error-text" role="alert" aria-label="Not restored">
          {props.failed.map(([name, why]) => (
            <li key={name}>
              {name}: {why}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
