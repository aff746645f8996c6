// One folder, as a panel of Syncthing's folder list: one line (name, state) that opens onto its
// sizes, settings, devices and actions. Syncthing keeps Remove in the edit dialog; here it is beside
// Edit, and says that the files stay (Syncthing's removal deletes nothing either).
import { useState } from 'preact/hooks';
import { del, patch, post } from '../api.ts';
import { bytes, count, duration, percent, rate, time } from '../format.ts';
import { ActionButton, Badge, Button, ErrorText, Progress, Row } from '../parts/ui.tsx';
import {
  completion,
  config,
  connections,
  deviceName,
  folderErrors,
  folderRate,
  folderStatus,
  myID,
  refreshConfig,
  refreshFolder,
  scanProgress,
  syncPercent,
  pulledBytes,
  downloads,
} from '../store.ts';
import type { FolderConfiguration, FolderStatus } from '../types.ts';
import { ConflictsDialog } from './folder-conflicts.tsx';
import { NeedDialog } from './folder-need.tsx';
import {
  folderName,
  folderState,
  STATE_LABELS,
  stateTone,
  TYPE_LABELS,
  VERSIONING_LABELS,
} from './folder-state.ts';
import { VersionsDialog } from './folder-versions.tsx';

/** The last scan and the last file pulled, from GET /rest/stats/folder. */
export interface FolderStats {
  lastScan?: string;
  lastFile?: { at: string; filename: string; deleted: boolean };
}

// Failed items listed on the card; the rest are counted.
const SHOWN_ERRORS = 10;

export function FolderCard(props: { folder: FolderConfiguration; stats?: FolderStats; onEdit: () => void }) {
  const { folder } = props;
  const [dialog, setDialog] = useState<'need' | 'versions' | 'conflicts'>();
  const status = folderStatus.value[folder.id];
  const state = folderState(folder, status);
  const name = folderName(folder);
  const scan = scanProgress.value[folder.id];
  const scanPercent =
    state === 'scanning' && scan && scan.total > 0 ? (100 * scan.current) / scan.total : undefined;
  const badge =
    state === 'syncing' && status
      ? `${STATE_LABELS.syncing} (${percent(syncPercent(folder.id, status))})`
      : scanPercent !== undefined
        ? `${STATE_LABELS.scanning} (${percent(scanPercent)})`
        : STATE_LABELS[state];
  const act = async (action: () => Promise<unknown>) => {
    await action();
    await Promise.all([refreshConfig(), refreshFolder(folder.id)]);
  };
  return (
    <details class="card folder" aria-label={`Folder ${name}`}>
      <summary>
        <h3>{name}</h3>
        <Badge tone={stateTone(state)}>{badge}</Badge>
      </summary>
      <StateDetails folder={folder} status={status} scanPercent={scanPercent} />
      <dl>
        <Row label="Folder ID">
          <code>{folder.id}</code>
        </Row>
        <Row label="Folder path">
          <code>{folder.path}</code>
        </Row>
        <Row label="Global state">{sizes(status, 'global')}</Row>
        <Row label="Local state">{sizes(status, 'local')}</Row>
        {status && status.needTotalItems > 0 && (
          <Row label="Out of sync items">
            {items(status.needTotalItems)}, {bytes(status.needBytes)}
          </Row>
        )}
        <Row label="Folder type">{TYPE_LABELS[folder.type] ?? folder.type}</Row>
        <Row label="Rescans">
          {folder.rescanIntervalS > 0 ? `every ${duration(folder.rescanIntervalS)}` : 'never'} · watcher{' '}
          {folder.fsWatcherEnabled ? 'on' : 'off'}
        </Row>
        <Row label="File versioning">
          {VERSIONING_LABELS[folder.versioning.type] ?? folder.versioning.type}
        </Row>
        <Row label="Shared with">
          <SharedWith folder={folder} />
        </Row>
        <Row label="Last scan">{when(props.stats?.lastScan)}</Row>
        <Row label="Latest change">
          {props.stats?.lastFile && isSet(props.stats.lastFile.at) ? (
            <>
              {props.stats.lastFile.deleted ? 'deleted ' : ''}
              <code>{props.stats.lastFile.filename}</code> <time>{time(props.stats.lastFile.at)}</time>
            </>
          ) : (
            'none yet'
          )}
        </Row>
      </dl>
      <div class="actions">
        <Button onClick={props.onEdit}>Edit</Button>
        <ActionButton
          action={() =>
            act(() => patch(`/rest/config/folders/${enc(folder.id)}`, { paused: !folder.paused }))
          }
        >
          {folder.paused ? 'Resume' : 'Pause'}
        </ActionButton>
        {!folder.paused && (
          <ActionButton action={() => post('/rest/db/scan', undefined, { folder: folder.id })}>
            Rescan
          </ActionButton>
        )}
        <Button onClick={() => setDialog('need')}>Needed items</Button>
        <Button
          onClick={() => setDialog('versions')}
          disabled={folder.versioning.type === '' || folder.paused}
          title={
            folder.versioning.type === ''
              ? 'This folder keeps no versions: set its file versioning first'
              : folder.paused
                ? 'Resume the folder to see its versions'
                : undefined
          }
        >
          Versions
        </Button>
        <Button onClick={() => setDialog('conflicts')}>Conflicts</Button>
        <ActionButton
          kind="danger"
          confirm={`Remove the folder "${name}"? It stops being synchronized here; its files stay on disk, in ${folder.path}.`}
          action={async () => {
            await del(`/rest/config/folders/${enc(folder.id)}`);
            await refreshConfig();
          }}
        >
          Remove
        </ActionButton>
      </div>
      {dialog === 'need' && <NeedDialog folder={folder} onClose={() => setDialog(undefined)} />}
      {dialog === 'versions' && <VersionsDialog folder={folder} onClose={() => setDialog(undefined)} />}
      {dialog === 'conflicts' && <ConflictsDialog folder={folder} onClose={() => setDialog(undefined)} />}
    </details>
  );
}

// What the state needs said beyond its badge: progress, the error and failed items, and the two
// ways out of Syncthing's out-of-sync states (override of a send-only folder, revert of a
// receive-only one), each asked for first, with Syncthing's warnings.
function StateDetails(props: { folder: FolderConfiguration; status?: FolderStatus; scanPercent?: number }) {
  const { folder, status } = props;
  if (!status) return null;
  const errors = folderErrors.value[folder.id] ?? [];
  const scan = scanProgress.value[folder.id];
  const after = () => refreshFolder(folder.id);
  // The rate counts whole files only: a large file being pulled shows in its DownloadProgress.
  const speed = folderRate.value[folder.id] ?? 0;
  const pulling = Object.values(downloads.value[folder.id] ?? {});
  return (
    <div class="folder-state">
      {status.state === 'syncing' && (
        <>
          <Progress
            value={syncPercent(folder.id, status)}
            label={`Synchronization of ${folderName(folder)}`}
          />
          <p class="muted">
            {bytes(status.inSyncBytes + pulledBytes(folder.id))} of {bytes(status.globalBytes)}
            {speed > 0 && ` · ${rate(speed)}`}
            {pulling.length > 0 &&
              ` · pulling ${pulling.length === 1 ? '1 file' : `${count(pulling.length)} files`}: ${bytes(sum(pulling, 'bytesDone'))} of ${bytes(sum(pulling, 'bytesTotal'))}`}
          </p>
        </>
      )}
      {status.state === 'scanning' && props.scanPercent !== undefined && scan && (
        <>
          <Progress value={props.scanPercent} label={`Scan of ${folderName(folder)}`} />
          <p class="muted">
            {bytes(scan.current)} of {bytes(scan.total)} hashed · {rate(scan.rate)}
          </p>
        </>
      )}
      {status.state === 'error' && status.error && <ErrorText>{status.error}</ErrorText>}
      {errors.length > 0 && (
        <div class="folder-errors">
          <p class="error-text">{items(errors.length)} could not be synchronized:</p>
          <ul>
            {errors.slice(0, SHOWN_ERRORS).map((error) => (
              <li key={error.path}>
                <code>{error.path}</code>: {error.error}
              </li>
            ))}
          </ul>
          {errors.length > SHOWN_ERRORS && (
            <p class="muted">and {count(errors.length - SHOWN_ERRORS)} more</p>
          )}
        </div>
      )}
      {!folder.paused && folder.type === 'sendonly' && status.needTotalItems > 0 && (
        <p>
          <ActionButton
            kind="danger"
            confirm="The folder's content on the other devices will be overwritten to become identical with this device. Files not present here will be deleted on the other devices. Go on?"
            action={async () => {
              await post('/rest/db/override', undefined, { folder: folder.id });
              await after();
            }}
          >
            Override changes
          </ActionButton>
        </p>
      )}
      {!folder.paused && folder.type === 'receiveonly' && status.receiveOnlyTotalItems > 0 && (
        <p>
          <ActionButton
            kind="danger"
            confirm="The folder's content on this device will be overwritten to become identical with the other devices. Files added here will be deleted. Go on?"
            action={async () => {
              await post('/rest/db/revert', undefined, { folder: folder.id });
              await after();
            }}
          >
            Revert local changes
          </ActionButton>{' '}
          <span class="muted">
            {items(status.receiveOnlyTotalItems)} changed here, {bytes(status.receiveOnlyChangedBytes)}
          </span>
        </p>
      )}
    </div>
  );
}

function SharedWith(props: { folder: FolderConfiguration }) {
  const others = props.folder.devices.filter((device) => device.deviceID !== myID.value);
  if (others.length === 0) return <>no other device</>;
  return (
    <ul class="plain">
      {others.map(({ deviceID }) => {
        const done = completion.value[`${props.folder.id} ${deviceID}`];
        const connected = connections.value?.connections[deviceID]?.connected;
        const known = config.value?.devices.some((device) => device.deviceID === deviceID);
        return (
          <li key={deviceID}>
            {deviceName(deviceID)}{' '}
            <span class="muted">
              {!known
                ? 'not a configured device'
                : !connected
                  ? 'disconnected'
                  : props.folder.paused
                    ? ''
                    : percent(done?.completion)}
            </span>
          </li>
        );
      })}
    </ul>
  );
}

function sizes(status: FolderStatus | undefined, which: 'local' | 'global') {
  if (!status) return '–';
  const files = status[`${which}Files`];
  const directories = status[`${which}Directories`];
  return `${count(files)} ${files === 1 ? 'file' : 'files'}, ${count(directories)} ${directories === 1 ? 'folder' : 'folders'}, ${bytes(status[`${which}Bytes`])}`;
}

// Syncthing answers the Unix epoch (or Go's zero time) for never.
const isSet = (iso: string | undefined) => !!iso && Date.parse(iso) > 0;
const when = (iso: string | undefined) => (isSet(iso) ? time(iso) : 'never');
const enc = encodeURIComponent;
const sum = <K extends string>(list: Array<Record<K, number>>, key: K) =>
  list.reduce((total, item) => total + item[key], 0);
const items = (n: number) => `${count(n)} ${n === 1 ? 'item' : 'items'}`;
