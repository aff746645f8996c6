// A folder's file versioning, as the versioning tab of Syncthing's folder dialog: the type, then the
// parameters that type reads (strings on the wire, as Syncthing's GUI sends them; staggered's maxAge
// in seconds, shown in days as Syncthing shows it). See docs/ignores-versioning-disk.md.
import { Field } from '../parts/ui.tsx';
import type { FolderConfiguration } from '../types.ts';

type Versioning = FolderConfiguration['versioning'];

const DAY_S = 86_400;

// The parameters each type starts with, Syncthing's defaults.
const PARAMS: Record<string, Record<string, string>> = {
  '': {},
  trashcan: { cleanoutDays: '0' },
  simple: { keep: '5', cleanoutDays: '0' },
  staggered: { maxAge: String(365 * DAY_S) },
  external: { command: '' },
};

/** The versioning with `type`: its parameters from the defaults, what the two types share kept. */
export function withType(versioning: Versioning, type: string): Versioning {
  const params: Record<string, string> = {};
  for (const [key, value] of Object.entries(PARAMS[type] ?? {}))
    params[key] = versioning.params[key] ?? value;
  return { ...versioning, type, params };
}

export function VersioningFields(props: { value: Versioning; onChange: (next: Versioning) => void }) {
  const { value, onChange } = props;
  const param = (key: string) => value.params[key] ?? PARAMS[value.type]?.[key] ?? '';
  const setParam = (key: string, text: string) =>
    onChange({ ...value, params: { ...value.params, [key]: text } });
  const number = (label: string, key: string, hint: string, min = 0) => (
    <Field label={label} hint={hint}>
      <input
        type="number"
        min={min}
        value={param(key)}
        onInput={(event) => setParam(key, event.currentTarget.value)}
      />
    </Field>
  );
  return (
    <>
      <Field label="File versioning">
        <select value={value.type} onChange={(event) => onChange(withType(value, event.currentTarget.value))}>
          <option value="">No file versioning</option>
          <option value="trashcan">Trash can</option>
          <option value="simple">Simple</option>
          <option value="staggered">Staggered</option>
          <option value="external">External</option>
        </select>
      </Field>
      {value.type === 'trashcan' &&
        number('Clean out after (days)', 'cleanoutDays', 'Days a deleted file is kept; 0 keeps it forever.')}
      {value.type === 'simple' && (
        <>
          {number('Keep versions', 'keep', 'How many old versions of each file are kept.', 1)}
          {number('Clean out after (days)', 'cleanoutDays', 'Days a version is kept; 0 keeps it forever.')}
        </>
      )}
      {value.type === 'staggered' && (
        <Field
          label="Maximum age (days)"
          hint="Fewer versions as they get older: one per 30 s for the first hour, per hour for a day, per day for 30 days, per week after that. 0 keeps them forever."
        >
          <input
            type="number"
            min={0}
            value={Math.round(Number(param('maxAge')) / DAY_S)}
            onInput={(event) => setParam('maxAge', String(Number(event.currentTarget.value) * DAY_S))}
          />
        </Field>
      )}
      {value.type === 'external' && (
        <Field
          label="Command"
          hint="Run instead of deleting or replacing a file, without a shell; %FOLDER_PATH% and %FILE_PATH% are replaced. It must remove the file."
        >
          <input
            value={param('command')}
            onInput={(event) => setParam('command', event.currentTarget.value)}
          />
        </Field>
      )}
      {value.type !== '' && value.type !== 'external' && (
        <>
          <Field
            label="Versions path"
            hint="Where versions are kept: empty for .stversions in the folder, else absolute or relative to the folder."
          >
            <input
              value={value.fsPath}
              onInput={(event) => onChange({ ...value, fsPath: event.currentTarget.value })}
            />
          </Field>
          <Field label="Cleanup interval (s)" hint="How often old versions are cleaned out; 0 never.">
            <input
              type="number"
              min={0}
              value={value.cleanupIntervalS}
              onInput={(event) => onChange({ ...value, cleanupIntervalS: Number(event.currentTarget.value) })}
            />
          </Field>
        </>
      )}
    </>
  );
}
