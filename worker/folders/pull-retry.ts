/** Syncthing's pause after a failed pull when the folder's pullerPauseS is 0 (folder_sendrecv.go). */
export const DEFAULT_PULL_PAUSE_MS = 60_000;

/**
 * When a pull that left items undone is tried again, as Syncthing's folder does (lib/model/folder.go
 * pull and Serve): after the pause and as long again as the failed pull took; the pause doubles with
 * each retry that fails too, up to 64 times the base, and a pull that succeeds brings it back to the
 * base (pullerPauseS, or 60 s).
 */
export class PullRetry {
  readonly #base: () => number;
  // Unset until a pull fails: the base is read then, as the folder's configuration is at that time.
  #pause: number | undefined;

  constructor(base: () => number) {
    this.#base = base;
  }

  /** A pull failed after `tookMs`: the delay before the next try. `retry`: this pull was one. */
  failed(tookMs: number, retry: boolean): number {
    const pause = (this.#pause ??= this.#base());
    if (retry && pause < 60 * this.#base()) this.#pause = pause * 2;
    return pause + tookMs;
  }

  succeeded(): void {
    this.#pause = undefined;
  }
}
