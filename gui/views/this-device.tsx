// This device: its name and ID (with a QR code to scan from a phone's Syncthing), the version, how
// long it has run, its listeners and discovery, what the two processes use, and the recent errors.
import { useEffect, useState } from 'preact/hooks';
import { call, post } from '../api.ts';
import { bytes, duration, percent, time } from '../format.ts';
import { ActionButton, Badge, Button, CopyButton, Modal, Row } from '../parts/ui.tsx';
import { cpu, ownDevice, recentErrors, refreshErrors, status, version } from '../store.ts';

export function ThisDevice() {
  const [showId, setShowId] = useState(false);
  const current = status.value;
  if (!current) return null;
  const listeners = Object.entries(current.connectionServiceStatus ?? {});
  const discovery = Object.entries(current.discoveryStatus ?? {});
  const usage = current.usage;
  return (
    <article class="card" aria-label="This device">
      <header>
        <h2>{ownDevice.value?.name || 'This device'}</h2>
        <Button onClick={() => setShowId(true)}>Show ID</Button>
      </header>
      <dl>
        <Row label="ID">
          <code class="device-id" data-testid="my-id">
            {current.myID}
          </code>
        </Row>
        <Row label="Version">
          {version.value ? `${version.value.version} (${version.value.os}/${version.value.arch})` : '–'}
        </Row>
        <Row label="Uptime">{duration(current.uptime)}</Row>
        <Row label="Listeners">
          {listeners.length === 0
            ? 'none'
            : listeners.map(([address, state]) => (
                <div key={address}>
                  <Badge tone={state.error ? 'error' : 'ok'}>{state.error ? 'failed' : 'listening'}</Badge>{' '}
                  {address}
                  {/* A port 0 or an unspecified host is listened on at the addresses the status names. */}
                  {!state.error && state.lanAddresses.length > 0 && !state.lanAddresses.includes(address) && (
                    <span class="muted"> at {state.lanAddresses.join(', ')}</span>
                  )}
                  {state.error && <div class="error-text">{state.error}</div>}
                </div>
              ))}
        </Row>
        <Row label="Discovery">
          {discovery.length === 0
            ? 'off'
            : `${discovery.filter(([, state]) => !state.error).length} of ${discovery.length} working`}
          {discovery
            .filter(([, state]) => state.error)
            .map(([name, state]) => (
              <div key={name} class="error-text">
                {name}: {state.error}
              </div>
            ))}
        </Row>
        <Row label="Worker">
          {percent(cpu.value.worker)} CPU, {bytes(usage?.worker.rss)}
        </Row>
        <Row label="Supervisor">
          {percent(cpu.value.supervisor)} CPU, {bytes(usage?.supervisor?.rss)}
          {current.supervisor.crashes > 0 && ` · ${current.supervisor.crashes} worker crashes`}
        </Row>
      </dl>
      <RecentErrors />
      {showId && (
        <Modal title="Device ID" onClose={() => setShowId(false)}>
          <p>
            <code class="device-id">{current.myID}</code>
          </p>
          <QrCode text={current.myID} />
          <p>
            <CopyButton text={current.myID} label="Copy ID" />
          </p>
        </Modal>
      )}
    </article>
  );
}

/** The QR code of `text`, fetched as the page's calls are (an image's own request carries no key). */
function QrCode(props: { text: string }) {
  const [source, setSource] = useState('');
  useEffect(() => {
    let url = '';
    void call<Blob>('GET', '/qr/', { query: { text: props.text }, blob: true }).then(
      (blob) => setSource((url = URL.createObjectURL(blob))),
      () => undefined,
    );
    return () => URL.revokeObjectURL(url);
  }, [props.text]);
  return source ? <img class="qr" src={source} alt="QR code of the device ID" /> : null;
}

function RecentErrors() {
  const errors = recentErrors.value;
  if (errors.length === 0) return null;
  return (
    <section class="recent-errors" aria-label="Recent errors">
      <h3>Recent errors</h3>
      <ul>
        {errors.map((error) => (
          <li key={`${error.when} ${error.message}`}>
            <time>{time(error.when)}</time> {error.message}
          </li>
        ))}
      </ul>
      <ActionButton
        action={async () => {
          await post('/rest/system/error/clear');
          await refreshErrors();
        }}
      >
        Clear
      </ActionButton>
    </section>
  );
}
