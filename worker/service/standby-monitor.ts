// Syncthing's standbyMonitor (cmd/syncthing/main.go): a computer that slept leaves the service with
// connections that are gone and networks that changed; when the clock jumped by more than two
// minutes between two ticks ten seconds apart, the service is restarted, a minute later, once the
// network has had a moment to come back (options.restartOnWakeup).

const TICK_MS = 10_000;
const JUMP_MS = 2 * 60_000;
const RESTART_DELAY_MS = 60_000;

export interface StandbyMonitorOptions {
  /** options.restartOnWakeup, as the configuration says now. */
  enabled: () => boolean;
  /** Asks for a new worker. */
  restart: () => void;
  log: (message: string) => void;
  now?: () => number;
}

export class StandbyMonitor {
  readonly #options: StandbyMonitorOptions;
  readonly #now: () => number;
  #last: number;
  #timer: NodeJS.Timeout | undefined;
  #restarting: NodeJS.Timeout | undefined;

  constructor(options: StandbyMonitorOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#last = this.#now();
  }

  start(): void {
    this.#timer = setInterval(() => this.tick(), TICK_MS);
    this.#timer.unref();
  }

  /** One look at the clock: a jump since the last look is a wake-up. */
  tick(): void {
    const now = this.#now();
    const slept = now - this.#last > JUMP_MS;
    this.#last = now;
    if (!slept || this.#restarting || !this.#options.enabled()) return;
    this.#options.log(
      `paused state detected, possibly woke up from standby; restarting in ${RESTART_DELAY_MS / 1000} s (options.restartOnWakeup)`,
    );
    this.#restarting = setTimeout(() => this.#options.restart(), RESTART_DELAY_MS);
    this.#restarting.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    clearTimeout(this.#restarting);
  }
}
