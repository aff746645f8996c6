// A folder's ignore patterns (.stignore, Syncthing's syntax), with what they would ignore shown as they
// are typed: syncd's own POST /rest/syncd/ignores/preview walks the folder as a scan would, a moment
// after the typing stops. A folder not added yet has nothing to walk.
import { useEffect, useState } from 'preact/hooks';
import { call, messageOf } from '../api.ts';
import { count } from '../format.ts';
import { Field } from '../parts/ui.tsx';
import type { IgnorePreview } from '../types.ts';

type Preview = IgnorePreview;

const DEBOUNCE_MS = 300;

/** The lines of the text as .stignore gets them: one pattern a line, the last line break ending none. */
export function ignoreLines(text: string): string[] {
  const lines = text.split('\n').map((line) => line.replace(/\r$/, ''));
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

export function IgnoresField(props: {
  /** The folder previewed; none for a folder still to be added. */
  folderId?: string;
  text: string;
  onInput: (text: string) => void;
  /** Why the patterns cannot be read or edited now (the folder's error). */
  error?: string;
  /** Not read yet, or not readable: nothing typed could be saved. */
  disabled?: boolean;
}) {
  const [preview, setPreview] = useState<Preview>();
  const [problem, setProblem] = useState('');
  const { folderId, text } = props;
  useEffect(() => {
    if (!folderId || props.disabled) return;
    const abort = new AbortController();
    const timer = setTimeout(() => {
      call<Preview>('POST', '/rest/syncd/ignores/preview', {
        query: { folder: folderId },
        body: { ignore: ignoreLines(text) },
        signal: abort.signal,
      }).then(
        (answer) => {
          setPreview(answer);
          setProblem('');
        },
        (error: unknown) => {
          if (!abort.signal.aborted) setProblem(messageOf(error));
        },
      );
    }, DEBOUNCE_MS);
    return () => {
      clearTimeout(timer);
      abort.abort();
    };
  }, [folderId, text, props.disabled]);
  return (
    <>
      <Field
        label="Ignore patterns"
        hint="One pattern a line: * and ** globs, / to anchor at the folder's root, ! to keep what a later line ignores, (?i) for any case, (?d) to let it go with its directory, // for comments, #include FILE."
        error={props.error}
      >
        <textarea
          value={text}
          rows={8}
          spellcheck={false}
          disabled={props.disabled}
          onInput={(event) => props.onInput(event.currentTarget.value)}
        />
      </Field>
      <section class="ignore-preview" aria-label="Ignored items" aria-live="polite">
        {!folderId ? (
          <p class="muted">What the patterns ignore is shown here once the folder is added.</p>
        ) : props.error ? null : problem ? (
          <p class="error-text" role="alert">
            {problem}
          </p>
        ) : preview ? (
          <>
            <p>
              {count(preview.total)} {preview.total === 1 ? 'item' : 'items'} ignored of{' '}
              {count(preview.scanned)} looked at
              {preview.truncated && ' (the folder holds more: the look stopped there)'}
            </p>
            {preview.ignored.length > 0 && (
              <ul class="ignored-list">
                {preview.ignored.map((name) => (
                  <li key={name}>
                    <code>{name}</code>
                  </li>
                ))}
                {preview.total > preview.ignored.length && (
                  <li class="muted">and {count(preview.total - preview.ignored.length)} more</li>
                )}
              </ul>
            )}
          </>
        ) : (
          <p class="muted">Looking…</p>
        )}
      </section>
    </>
  );
}
