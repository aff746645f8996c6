import type { ServiceEvent } from '../../shared/client/client.ts';
import { localTime } from './format.ts';
import { bytes } from './traffic.ts';
import { safeLine } from '../../shared/terminal-text.ts';

type Data = Record<string, unknown>;

const short = (id: unknown) => (typeof id === 'string' ? safeLine(id.slice(0, 7)) : '?');
// Every value is one line, escaped: a name another device chose cannot forge a line or drive the terminal.
const text = (value: unknown) => safeLine(typeof value === 'string' ? value : JSON.stringify(value));

/**
 * What the event says, for people: the types a person follows in words (their data as Syncthing's
 * lib/events/events.go documents it), any other as its type and compact JSON.
 */
const described: Record<string, (data: Data) => string> = {
  Starting: (d) => `starting, home ${text(d.home)}`,
  StartupComplete: () => 'started',
  StateChanged: (d) =>
    `folder ${text(d.folder)}: ${text(d.from)} → ${text(d.to)}${d.error ? ` (${text(d.error)})` : ''}`,
  ItemStarted: (d) => `folder ${text(d.folder)}: ${text(d.action)} ${text(d.type)} ${text(d.item)} begun`,
  ItemFinished: (d) =>
    `folder ${text(d.folder)}: ${text(d.action)} ${text(d.type)} ${text(d.item)} ${d.error ? `failed: ${text(d.error)}` : 'done'}`,
  LocalIndexUpdated: (d) => `folder ${text(d.folder)}: ${text(d.items)} items changed here`,
  RemoteIndexUpdated: (d) => `folder ${text(d.folder)}: ${text(d.items)} items changed on ${short(d.device)}`,
  LocalChangeDetected: (d) =>
    `folder ${text(d.folder)}: ${text(d.type)} ${text(d.path)} ${text(d.action)} here`,
  RemoteChangeDetected: (d) =>
    `folder ${text(d.folder)}: ${text(d.type)} ${text(d.path)} ${text(d.action)} by ${short(d.modifiedBy)}`,
  DeviceConnected: (d) =>
    `device ${short(d.id)} ${d.deviceName ? `(${text(d.deviceName)}) ` : ''}connected from ${text(d.addr)}, ${text(d.clientName)} ${text(d.clientVersion)}`,
  DeviceDisconnected: (d) => `device ${short(d.id)} disconnected: ${text(d.error)}`,
  DevicePaused: (d) => `device ${short(d.device)} paused`,
  DeviceResumed: (d) => `device ${short(d.device)} resumed`,
  DeviceDiscovered: (d) => `device ${short(d.device)} found at ${text(d.addrs)}`,
  PendingDevicesChanged: (d) => pendingChange('device', d, (entry) => short(entry.deviceID)),
  PendingFoldersChanged: (d) =>
    pendingChange('folder', d, (entry) => `${text(entry.folderID)} from ${short(entry.deviceID)}`),
  FolderCompletion: (d) =>
    `folder ${text(d.folder)}: device ${short(d.device)} has ${Math.floor(Number(d.completion))}%${Number(d.needBytes) > 0 ? `, needs ${bytes(Number(d.needBytes))}` : ''}`,
  FolderSummary: (d) => {
    const summary = (d.summary ?? {}) as Data;
    return `folder ${text(d.folder)}: ${text(summary.state)}, ${text(summary.needTotalItems)} items needed, ${bytes(Number(summary.globalBytes ?? 0))} in all`;
  },
  FolderErrors: (d) => {
    const errors = (d.errors ?? []) as Data[];
    return `folder ${text(d.folder)}: ${errors.length} items failed${errors[0] ? `, first ${text(errors[0].path)}: ${text(errors[0].error)}` : ''}`;
  },
  FolderScanProgress: (d) => `folder ${text(d.folder)}: scanned ${text(d.current)} of ${text(d.total)} bytes`,
  FolderPaused: (d) => `folder ${text(d.id)} paused`,
  FolderResumed: (d) => `folder ${text(d.id)} resumed`,
  FolderRejected: (d) => `folder ${text(d.folder)} offered by ${short(d.device)} is not shared with it`,
  ConfigSaved: () => 'configuration saved',
  DownloadProgress: (d) => {
    const files = Object.entries(d).flatMap(([folder, names]) =>
      Object.entries(names as Record<string, Data>).map(
        ([name, p]) =>
          `${text(folder)}/${text(name)} ${bytes(Number(p.bytesDone))} of ${bytes(Number(p.bytesTotal))}`,
      ),
    );
    return files.length === 0 ? 'downloads done' : `downloading ${files.join(', ')}`;
  },
  LoginAttempt: (d) =>
    `login ${d.success ? 'succeeded' : 'failed'} for ${text(d.username)} from ${text(d.remoteAddress)}`,
  Failure: (d) => `failure: ${text(d)}`,
};

function pendingChange(kind: string, data: Data, name: (entry: Data) => string): string {
  const list = (key: string) => ((data[key] ?? []) as Data[]).map(name);
  const added = list('added');
  const removed = list('removed');
  const parts = [];
  if (added.length > 0) parts.push(`offered: ${added.join(', ')}`);
  if (removed.length > 0) parts.push(`gone: ${removed.join(', ')}`);
  return `pending ${kind}s ${parts.join('; ') || 'changed'}`;
}

/** One line: local time, type, and what it means. */
export function eventLine(event: ServiceEvent): string {
  const describe = described[event.type];
  const data = (event.data ?? {}) as Data;
  const what = describe ? describe(data) : safeLine(JSON.stringify(event.data) ?? '');
  return `${localTime(event.time)}  ${event.type.padEnd(21)}  ${what}`;
}
