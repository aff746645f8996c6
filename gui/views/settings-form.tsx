// What the settings tabs share: a form holds only the fields the user changed (the others show the
// configuration as it is now, so a change made elsewhere meanwhile is neither hidden nor undone), and
// its Save sends those alone. The service checks them: its 400 message is shown as it is, and what
// was typed stays; after a save the configuration is read again, with whether it needs a restart.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { messageOf } from '../api.ts';
import { Button } from '../parts/ui.tsx';
import { config, refreshConfig, restartRequired } from '../store.ts';
import type { Configuration } from '../types.ts';

export type Values = Record<string, string | boolean>;

type Outcome = { saved: true; restart: boolean; note?: ComponentChildren } | { saved: false; error: string };

export interface SettingsForm<T extends Values> {
  /** What each field shows: the user's change, else the configuration's value. */
  value: T;
  set: <K extends keyof T & string>(key: K, value: T[K]) => void;
  /** The fields the user changed, with their new values. */
  changed: Partial<T>;
  submit: (event: Event) => Promise<void>;
  busy: boolean;
  outcome: Outcome | undefined;
}

/**
 * `read` gives the form's values from the configuration; `save` sends the changed ones (it may
 * answer a note to show beside "Saved").
 */
export function useSettingsForm<T extends Values>(
  read: (config: Configuration) => T,
  save: (changed: Partial<T>) => Promise<ComponentChildren | void>,
): SettingsForm<T> {
  const [edits, setEdits] = useState<Partial<T>>({});
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<Outcome | undefined>(undefined);
  const current = read(config.value as Configuration);
  const value = { ...current, ...edits } as T;
  const changed = Object.fromEntries(
    Object.entries(edits).filter(([key, edit]) => edit !== current[key]),
  ) as Partial<T>;

  const set = <K extends keyof T & string>(key: K, next: T[K]) => {
    setEdits((was) => ({ ...was, [key]: next }));
    setOutcome((was) => (was?.saved ? undefined : was));
  };

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setOutcome(undefined);
    try {
      const note = await save(changed);
      // A new password or address may cut this page off: then the page says so by itself.
      await refreshConfig().catch(() => undefined);
      setEdits({});
      setOutcome({ saved: true, restart: restartRequired.value, note: note ?? undefined });
    } catch (failure) {
      // Some of it may have been saved (a tab that writes to two places): shown as it is now.
      await refreshConfig().catch(() => undefined);
      setOutcome({ saved: false, error: messageOf(failure) });
    } finally {
      setBusy(false);
    }
  };

  return { value, set, changed, submit, busy, outcome };
}

/** The form's Save button, and what came of the last save. */
export function SaveBar(props: { form: Pick<SettingsForm<Values>, 'busy' | 'outcome' | 'changed'> }) {
  const { busy, outcome, changed } = props.form;
  return (
    <div class="save-bar">
      <Button kind="primary" type="submit" disabled={busy || Object.keys(changed).length === 0}>
        Save
      </Button>
      {outcome && !outcome.saved && (
        <span class="error-text" role="alert">
          {outcome.error}
        </span>
      )}
      {outcome?.saved && (
        <span role="status">
          Saved.
          {outcome.restart && ' syncd needs a restart for a change to take effect (Actions › Restart).'}
          {outcome.note && <> {outcome.note}</>}
        </span>
      )}
    </div>
  );
}

/** A configuration list as one line, and back: as Syncthing's settings dialog shows them. */
export const listText = (list: readonly string[]) => list.join(', ');
export const listOf = (text: string) =>
  text
    .split(/[\s,]+/)
    .map((item) => item.trim())
    .filter((item) => item !== '');
