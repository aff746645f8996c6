// The service's log, as Syncthing's log dialog shows it: the lines the worker keeps (the first of the
// process and the newest), read again every 2 s for the lines after the last shown (`since`), the
// newest at the bottom; below, the debug facilities to switch on and off.
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { call, get, messageOf } from '../api.ts';
import { ActionButton, ErrorText, Field } from '../parts/ui.tsx';
import { DebugFacilities } from './log-debug.tsx';

interface LogLine {
  when: string;
  message: string;
  /** Syncthing's: 0 debug, 1 verbose, 2 info, 3 warning or worse. */
  level: number;
}

const EVERY_MS = 2_000;
/** Lines kept while the view stays open (the service keeps 250). */
const KEPT = 2_000;
const LEVELS = ['DEBUG', 'VERBOSE', 'INFO', 'WARNING'];

export function LogView() {
  const [lines, setLines] = useState<LogLine[] | undefined>(undefined);
  const [error, setError] = useState('');
  const [warnings, setWarnings] = useState(false);
  const [filter, setFilter] = useState('');
  const [follow, setFollow] = useState(true);
  const box = useRef<HTMLDivElement>(null);

  useEffect(() => {
    const stop = new AbortController();
    let since: string | undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const read = async () => {
      try {
        const answer = await get<{ messages: LogLine[] | null }>('/rest/system/log', { since }, stop.signal);
        const fresh = answer.messages ?? [];
        if (fresh.length > 0) since = fresh.at(-1)?.when;
        setLines((was) => [...(was ?? []), ...fresh].slice(-KEPT));
        setError('');
      } catch (failure) {
        if (stop.signal.aborted) return;
        setError(messageOf(failure));
      }
      if (!stop.signal.aborted) timer = setTimeout(read, EVERY_MS);
    };
    void read();
    return () => {
      stop.abort();
      clearTimeout(timer);
    };
  }, []);

  const needle = filter.trim().toLowerCase();
  const shown = (lines ?? []).filter(
    (line) =>
      (!warnings || line.level >= 3) && (needle === '' || line.message.toLowerCase().includes(needle)),
  );

  useLayoutEffect(() => {
    if (follow && box.current) box.current.scrollTop = box.current.scrollHeight;
  }, [follow, shown.length, warnings, needle]);

  return (
    <div class="stack">
      <section class="card" aria-label="Log">
        <header class="view-head">
          <h1>Log</h1>
          <ActionButton action={download}>Download</ActionButton>
        </header>
        <div class="filters">
          <Field label="Level">
            <select
              value={warnings ? 'warnings' : 'all'}
              onChange={(event) => setWarnings(event.currentTarget.value === 'warnings')}
            >
              <option value="all">All</option>
              <option value="warnings">Warnings and errors</option>
            </select>
          </Field>
          <Field label="Filter">
            <input
              type="search"
              value={filter}
              placeholder="Text in the line"
              onInput={(event) => setFilter(event.currentTarget.value)}
            />
          </Field>
          <label class="check">
            <input
              type="checkbox"
              checked={follow}
              onChange={(event) => setFollow(event.currentTarget.checked)}
            />
            Follow
          </label>
        </div>
        {error && <ErrorText>{error}</ErrorText>}
        {lines === undefined && !error && <p class="loading">Loading…</p>}
        {lines !== undefined && (
          <div class="log-lines" ref={box} role="log" aria-label="Log lines">
            {shown.length === 0 && <p class="muted">No line {lines.length > 0 ? 'matches' : 'yet'}.</p>}
            {shown.map((line) => (
              // The "..." where lines were dropped has the time of the line after it.
              <div
                key={line.message === '...' ? `${line.when} gap` : line.when}
                class={`log-line level-${line.level}`}
              >
                <time dateTime={line.when}>{new Date(line.when).toLocaleTimeString()}</time>{' '}
                {line.level !== 2 && <b>{LEVELS[line.level] ?? line.level} </b>}
                {line.message}
              </div>
            ))}
          </div>
        )}
      </section>
      <DebugFacilities />
    </div>
  );
}

/**
 * The log as text, saved as a file. A plain link to /rest/system/log.txt would go without the
 * page's CSRF header, which the service asks of every /rest call (401), so the page reads it and hands
 * the browser the text.
 */
async function download(): Promise<void> {
  const text = await call<string>('GET', '/rest/system/log.txt', { text: true });
  const link = document.createElement('a');
  link.href = URL.createObjectURL(new Blob([text], { type: 'text/plain' }));
  link.download = `syncd-log-${new Date().toISOString().slice(0, 19).replaceAll(':', '-')}.txt`;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
}
