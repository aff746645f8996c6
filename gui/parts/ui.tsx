// The page's few building blocks: every view is made of these, so that all look and behave alike.
import type { ButtonHTMLAttributes, ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { messageOf } from '../api.ts';

export function Button(
  props: ButtonHTMLAttributes<HTMLButtonElement> & { kind?: 'primary' | 'danger' | 'plain' },
) {
  const { kind = 'plain', class: extra, ...rest } = props;
  return <button type="button" class={`button ${kind} ${extra ?? ''}`} {...rest} />;
}

/**
 * A button whose action calls the service: disabled while it runs, and what went wrong shown beside
 * it, in the service's words.
 */
export function ActionButton(props: {
  action: () => Promise<unknown>;
  children: ComponentChildren;
  kind?: 'primary' | 'danger' | 'plain';
  confirm?: string;
  title?: string;
  name?: string;
  /** Called once the action succeeded (a menu closes then, and not before: a failure shows in it). */
  onDone?: () => void;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const run = async () => {
    if (props.confirm && !window.confirm(props.confirm)) return;
    setBusy(true);
    setError('');
    try {
      await props.action();
      props.onDone?.();
    } catch (failure) {
      setError(messageOf(failure));
    } finally {
      setBusy(false);
    }
  };
  return (
    <span class="action">
      <Button kind={props.kind} disabled={busy} onClick={run} title={props.title} name={props.name}>
        {props.children}
      </Button>
      {error && (
        <span class="error-text" role="alert">
          {error}
        </span>
      )}
    </span>
  );
}

export function Modal(props: {
  title: string;
  onClose: () => void;
  children: ComponentChildren;
  wide?: boolean;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const element = dialog.current;
    if (element && !element.open) element.showModal();
    return () => element?.close();
  }, []);
  return (
    <dialog
      ref={dialog}
      class={`modal ${props.wide ? 'wide' : ''}`}
      aria-label={props.title}
      onCancel={(event) => {
        event.preventDefault();
        props.onClose();
      }}
    >
      <header>
        <h2>{props.title}</h2>
        <button type="button" class="close" aria-label="Close" onClick={props.onClose}>
          ×
        </button>
      </header>
      <div class="modal-body">{props.children}</div>
    </dialog>
  );
}

export function Field(props: { label: string; hint?: string; children: ComponentChildren; error?: string }) {
  return (
    <label class="field">
      <span class="label">{props.label}</span>
      {props.children}
      {props.hint && <span class="hint">{props.hint}</span>}
      {props.error && (
        <span class="error-text" role="alert">
          {props.error}
        </span>
      )}
    </label>
  );
}

export function Progress(props: { value: number; label?: string }) {
  const value = Math.max(0, Math.min(100, props.value));
  return (
    <div
      class="progress"
      role="progressbar"
      aria-valuemin={0}
      aria-valuemax={100}
      aria-valuenow={Math.round(value)}
      aria-label={props.label}
    >
      <div class="bar" style={{ width: `${value}%` }} />
    </div>
  );
}

export function Badge(props: {
  tone: 'ok' | 'busy' | 'warn' | 'error' | 'idle';
  children: ComponentChildren;
}) {
  return <span class={`badge ${props.tone}`}>{props.children}</span>;
}

/** A label and its value, in the two-column lists of the cards. */
export function Row(props: { label: string; children: ComponentChildren }) {
  return (
    <div class="row">
      <dt>{props.label}</dt>
      <dd>{props.children}</dd>
    </div>
  );
}

/** Copies `text` to the clipboard; says so for a moment. */
export function CopyButton(props: { text: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.text);
    } catch {
      // Without the clipboard API (a page served over plain HTTP to another machine): a selection.
      const area = document.createElement('textarea');
      area.value = props.text;
      document.body.append(area);
      area.select();
      document.execCommand('copy');
      area.remove();
    }
    setCopied(true);
    setTimeout(() => setCopied(false), 1500);
  };
  return <Button onClick={copy}>{copied ? 'Copied' : (props.label ?? 'Copy')}</Button>;
}

export function ErrorText(props: { children: ComponentChildren }) {
  return (
    <p class="error-text" role="alert">
      {props.children}
    </p>
  );
}

/**
 * A dialog's Save and Cancel, and why the last save was refused (in the service's words): the dialog
 * stays open with what was typed. `onSave` for a dialog that is not a form (a submit button otherwise).
 */
export function SaveCancel(props: {
  disabled: boolean;
  error: string;
  onCancel: () => void;
  onSave?: () => void;
}) {
  return (
    <div class="actions">
      <Button
        kind="primary"
        type={props.onSave ? 'button' : 'submit'}
        onClick={props.onSave}
        disabled={props.disabled}
      >
        Save
      </Button>
      <Button onClick={props.onCancel}>Cancel</Button>
      {props.error && (
        <span class="error-text" role="alert">
          {props.error}
        </span>
      )}
    </div>
  );
}

/** A row of tabs; the panel below is the caller's. */
export function Tabs<T extends string>(props: { tabs: readonly T[]; current: T; onPick: (tab: T) => void }) {
  return (
    <div class="tabs" role="tablist">
      {props.tabs.map((tab) => (
        <Button key={tab} role="tab" aria-selected={tab === props.current} onClick={() => props.onPick(tab)}>
          {tab}
        </Button>
      ))}
    </div>
  );
}

/** A checkbox with its label after it. */
export function Check(props: {
  label: string;
  checked: boolean;
  onChange: (checked: boolean) => void;
  hint?: ComponentChildren;
  /** Shown, not changed (a flag decides it, or it needs what is not there). */
  disabled?: boolean;
}) {
  return (
    <div class="field">
      <label class="check">
        <input
          type="checkbox"
          checked={props.checked}
          disabled={props.disabled}
          onChange={(event) => props.onChange(event.currentTarget.checked)}
        />
        {props.label}
      </label>
      {props.hint && <span class="hint">{props.hint}</span>}
    </div>
  );
}
