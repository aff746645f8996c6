import type { EventLog } from '../events/event-log.ts';

/** Syncthing's pullerProgress of one file: blocks by where they came from, and bytes. */
export interface FileProgress {
  total: number;
  reused: number;
  copiedFromOrigin: number;
  copiedFromOriginShifted: number;
  copiedFromElsewhere: number;
  pulled: number;
  pulling: number;
  bytesDone: number;
  bytesTotal: number;
}

export type BlockSource = 'reused' | 'copiedFromOrigin' | 'copiedFromElsewhere' | 'pulled';

/**
 * The files being pulled, block by block, for Syncthing's DownloadProgress event: what each file's
 * blocks came from so far (its temporary file, its old version, another file, a device).
 */
export class DownloadProgress {
  readonly #files = new Map<string, Map<string, FileProgress>>();
  #updated = 0;

  /** A file's pull begins: `blocks` blocks of `bytes` bytes in all. Returns what to call as blocks arrive. */
  track(folder: string, name: string, blocks: number, bytes: number) {
    const progress: FileProgress = {
      total: blocks,
      reused: 0,
      copiedFromOrigin: 0,
      copiedFromOriginShifted: 0,
      copiedFromElsewhere: 0,
      pulled: 0,
      pulling: blocks,
      bytesDone: 0,
      bytesTotal: bytes,
    };
    let files = this.#files.get(folder);
    if (!files) this.#files.set(folder, (files = new Map()));
    files.set(name, progress);
    this.#updated += 1;
    return {
      block: (source: BlockSource, size: number) => {
        progress[source] += 1;
        progress.pulling -= 1;
        progress.bytesDone += size;
        this.#updated += 1;
      },
      done: () => {
        files.delete(name);
        if (files.size === 0) this.#files.delete(folder);
        this.#updated += 1;
      },
    };
  }

  /** Changes with every block and every file begun or ended. */
  get updated(): number {
    return this.#updated;
  }

  /** The names of the folder's files being pulled now. */
  pulling(folder: string): ReadonlySet<string> {
    return new Set(this.#files.get(folder)?.keys());
  }

  /** By folder and name, as the event carries it. */
  snapshot(): Record<string, Record<string, FileProgress>> {
    const out: Record<string, Record<string, FileProgress>> = {};
    for (const [folder, files] of this.#files) {
      out[folder] = Object.fromEntries([...files].map(([name, progress]) => [name, { ...progress }]));
    }
    return out;
  }
}

/**
 * Logs DownloadProgress every `intervalS()` seconds (options.progressUpdateIntervalS; below 0: never)
 * when anything moved since the last one, as Syncthing's progress emitter does; an empty one tells
 * that the last file ended. Returns what stops it.
 */
export function emitDownloadProgress(
  progress: DownloadProgress,
  events: EventLog,
  intervalS: () => number,
): () => void {
  let last = progress.updated;
  let lastAt = 0;
  // Looked at every second, so that a changed interval counts at once.
  const timer = setInterval(() => {
    const seconds = intervalS();
    if (seconds < 0 || progress.updated === last || Date.now() - lastAt < seconds * 1000) return;
    last = progress.updated;
    lastAt = Date.now();
    events.log('DownloadProgress', progress.snapshot());
  }, 1000);
  timer.unref();
  return () => clearInterval(timer);
}
