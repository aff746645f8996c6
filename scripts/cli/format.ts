import type { RecentError } from '../../shared/api-types.ts';
import type { FileVersionShown, Status } from '../../shared/client/client.ts';

/** Prints a command's answer: its JSON with --json, else the text for people. */
export type Print = (json: unknown, text: string) => void;

/** A time in the local time zone, as 2026-11-21 06:01:02. */
export function localTime(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

/** How long ago, as people say it: 12 s, 3 min, 2 h 5 min, 4 days. */
export function age(iso: string, now = Date.now()): string {
  return duration(Math.max(0, (now - new Date(iso).getTime()) / 1000));
}

export function duration(seconds: number): string {
  if (seconds < 60) return `${Math.floor(seconds)} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min`;
  return `${Math.floor(seconds / 86_400)} days`;
}

const levelNames: Record<number, string> = { 30: 'info', 40: 'warning', 50: 'error', 60: 'fatal' };

export function errorsTable(errors: RecentError[], now = Date.now()): string {
  if (errors.length === 0) return 'no recent errors';
  return errors
    .map(
      (e) =>
        `${localTime(e.when)}  ${`${age(e.when, now)} ago`.padEnd(12)}  ${(levelNames[e.level] ?? String(e.level)).padEnd(7)}  ${e.message}`,
    )
    .join('\n');
}

export function statusTable(status: Status): string {
  const megabytes = (bytes: number | undefined) =>
    bytes === undefined ? '?' : `${(bytes / 2 ** 20).toFixed(1)} MB`;
  // Syncthing answers the same call without a pid or a supervisor: its device ID tells it then.
  const { pid, myID } = status as Partial<Status>;
  const since = `up ${duration(status.uptime ?? 0)}, since ${localTime(status.startTime)}`;
  const rows: Array<[string, string]> = [
    pid !== undefined
      ? ['worker', `pid ${pid}, ${since}`]
      : ['service', `${myID ? `device ${myID}, ` : ''}${since}`],
  ];
  const supervisor = (status as Partial<Status>).supervisor;
  if (supervisor) {
    rows.push([
      'supervisor',
      `pid ${supervisor.pid}, since ${localTime(supervisor.startTime)}, ${supervisor.restarts} restarts, ${supervisor.crashes} crashes`,
    ]);
  }
  if (myID && pid !== undefined) rows.push(['device', myID]);
  rows.push(['address', String(status.guiAddressUsed ?? '?')]);
  // Where other devices reach it: each listen address as bound (its first LAN address), or why not.
  for (const [text, entry] of Object.entries(status.connectionServiceStatus ?? {})) {
    const where = entry.lanAddresses[0];
    rows.push([
      'sync',
      entry.error ? `${text}: ${entry.error}` : where && where !== text ? `${where} (${text})` : text,
    ]);
  }
  if (status.memory)
    rows.push([
      'memory',
      `${megabytes(status.memory.rss)} resident, ${megabytes(status.memory.heapUsed)} heap`,
    ]);
  return rows.map(([name, value]) => `${name.padEnd(10)}  ${value}`).join('\n');
}

/** A folder's versions, by file and newest first: the time to give `versions FOLDER restore`, and sizes. */
export function versionsTable(versions: Record<string, FileVersionShown[]>): string {
  const names = Object.keys(versions).sort();
  if (names.length === 0) return 'no versions kept';
  return names
    .map((name) => {
      const kept = [...(versions[name] ?? [])].sort(
        (a, b) => Date.parse(b.versionTime) - Date.parse(a.versionTime),
      );
      const lines = kept.map(
        (version) =>
          `  ${version.versionTime}  ${version.size} bytes, modified ${localTime(version.modTime)}`,
      );
      return [name, ...lines].join('\n');
    })
    .join('\n');
}
