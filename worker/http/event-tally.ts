import type { EventLog, EventType } from '../events/event-log.ts';

/** A folder's scans and pulls since the worker started, and the seconds of those that ended. */
export interface FolderActivity {
  scans: number;
  scanSeconds: number;
  pulls: number;
  pullSeconds: number;
}

/**
 * What the metrics count of the event log from the worker's start, where Syncthing 2.x counts it as it
 * happens (lib/events/metrics.go; lib/model/folder.go scan, folder_sendrecv.go pull): the events
 * logged, by type, and each folder's scans and pulls, from its state changes. A scan is a time in
 * `scanning`, a pull one in `syncing`; the reader adds the one under way (from the folder's state), so
 * that a long one counts as it goes, as Syncthing adds its time every second.
 */
export class EventTally {
  readonly events = new Map<EventType, number>();
  readonly folders = new Map<string, FolderActivity>();
  readonly stop: () => void;

  constructor(log: EventLog) {
    this.stop = log.onEvent((type, data) => this.#count(type, data));
  }

  #count(type: EventType, data: unknown): void {
    this.events.set(type, (this.events.get(type) ?? 0) + 1);
    if (type !== 'StateChanged') return;
    const { folder, from, to, duration } = data as Record<string, unknown>;
    if (typeof folder !== 'string') return;
    let activity = this.folders.get(folder);
    if (!activity) {
      activity = { scans: 0, scanSeconds: 0, pulls: 0, pullSeconds: 0 };
      this.folders.set(folder, activity);
    }
    const seconds = typeof duration === 'number' ? duration : 0;
    if (from === 'scanning') activity.scanSeconds += seconds;
    if (from === 'syncing') activity.pullSeconds += seconds;
    if (to === 'scanning') activity.scans += 1;
    if (to === 'syncing') activity.pulls += 1;
  }
}
