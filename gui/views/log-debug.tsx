// The debug facilities, as the Debugging Facilities tab of Syncthing's log dialog: each part of the
// worker whose debug lines can be turned on, with a checkbox; a change is posted at once
// (POST /rest/system/debug?enable=NAME or ?disable=NAME) and the list read again.
import { useEffect, useState } from 'preact/hooks';
import { get, messageOf, post } from '../api.ts';
import { ErrorText } from '../parts/ui.tsx';

interface Debug {
  enabled: string[] | null;
  facilities: Record<string, string>;
}

export function DebugFacilities() {
  const [debug, setDebug] = useState<Debug | undefined>(undefined);
  const [error, setError] = useState('');
  // What a checkbox was switched to, shown while the service is told (it goes back on a refusal).
  const [wanted, setWanted] = useState<Record<string, boolean>>({});

  const read = async () => setDebug(await get<Debug>('/rest/system/debug'));
  useEffect(() => {
    read().catch((failure) => setError(messageOf(failure)));
  }, []);

  const toggle = async (name: string, on: boolean) => {
    setWanted((was) => ({ ...was, [name]: on }));
    setError('');
    try {
      await post('/rest/system/debug', undefined, on ? { enable: name } : { disable: name });
      await read();
    } catch (failure) {
      setError(`${name}: ${messageOf(failure)}`);
    } finally {
      setWanted(({ [name]: _, ...rest }) => rest);
    }
  };

  const enabled = new Set(debug?.enabled ?? []);
  return (
    <section class="card" aria-label="Debugging facilities">
      <h2>Debugging facilities</h2>
      <p class="muted">
        A facility switched on writes its debug lines to the log, so fewer older lines are kept. A restart
        starts again from the facilities syncd was started with (--trace).
      </p>
      {error && <ErrorText>{error}</ErrorText>}
      {debug === undefined && !error && <p class="loading">Loading…</p>}
      {debug && (
        <ul class="facilities">
          {Object.entries(debug.facilities).map(([name, description]) => (
            <li key={name}>
              <label class="check">
                <input
                  type="checkbox"
                  name={name}
                  checked={wanted[name] ?? enabled.has(name)}
                  disabled={name in wanted}
                  onChange={(event) => void toggle(name, event.currentTarget.checked)}
                />
                <code>{name}</code> <span class="muted">{description}</span>
              </label>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
