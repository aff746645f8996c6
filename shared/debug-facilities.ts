import type { Logger } from 'pino';

/**
 * The parts of the worker whose debug lines can be turned on one at a time, with Syncthing's names
 * and descriptions for them (the debug.go file of each of its lib packages), as GET /rest/system/debug lists them. Only the parts
 * that write debug lines are here: a facility that turned nothing on would be accepted and ignored.
 */
export const FACILITIES = {
  connections: 'Connection handling',
  discover: 'Remote device discovery',
  main: 'Main package',
  model: 'The root hub',
  protocol: 'The BEP protocol',
} as const;

export type Facility = keyof typeof FACILITIES;

function isFacility(name: string): name is Facility {
  return Object.hasOwn(FACILITIES, name);
}

/** A facility's level, as Syncthing 2.x names them in /rest/system/loglevels. */
export const FACILITY_LEVELS = ['DEBUG', 'INFO', 'WARN', 'ERROR'] as const;
export type FacilityLevel = (typeof FACILITY_LEVELS)[number];

/**
 * One logger per facility, children of the worker's, each at its own level: DEBUG while its
 * facility is enabled (STTRACE at start, POST /rest/system/debug or loglevels while running), else the
 * root's. Unknown names are accepted and do nothing, as in Syncthing (its facilities differ between
 * versions, and clients send their own lists).
 */
export class DebugFacilities {
  readonly #root: Logger;
  readonly #loggers = new Map<Facility, Logger>();
  readonly #levels = new Map<Facility, FacilityLevel>();

  constructor(root: Logger, enabled: readonly string[] = []) {
    this.#root = root;
    this.set(enabled, []);
  }

  /** The logger a part of the worker writes through. */
  logger(facility: Facility): Logger {
    let logger = this.#loggers.get(facility);
    if (!logger) {
      logger = this.#root.child({ facility });
      logger.level = this.#pinoLevel(facility);
      this.#loggers.set(facility, logger);
    }
    return logger;
  }

  /** The facilities writing debug lines, sorted. */
  enabled(): Facility[] {
    return (Object.keys(FACILITIES) as Facility[]).filter((name) => this.level(name) === 'DEBUG');
  }

  level(facility: Facility): FacilityLevel {
    return this.#levels.get(facility) ?? this.#rootLevel();
  }

  /** Syncthing 1.19's switch: debug lines on for some facilities, back to the root's level for others. */
  set(enable: readonly string[], disable: readonly string[]): void {
    for (const name of enable) if (isFacility(name)) this.#levels.set(name, 'DEBUG');
    for (const name of disable) if (isFacility(name)) this.#levels.delete(name);
    this.#apply();
  }

  /** Syncthing 2.x's: a level per facility. */
  setLevels(levels: ReadonlyMap<string, FacilityLevel>): void {
    for (const [name, level] of levels) if (isFacility(name)) this.#levels.set(name, level);
    this.#apply();
  }

  #apply(): void {
    for (const [facility, logger] of this.#loggers) logger.level = this.#pinoLevel(facility);
  }

  #pinoLevel(facility: Facility): string {
    const level = this.#levels.get(facility);
    if (level === undefined) return this.#root.level;
    // Trace, when the root logs that much already.
    if (level === 'DEBUG') return this.#root.level === 'trace' ? 'trace' : 'debug';
    return level.toLowerCase();
  }

  #rootLevel(): FacilityLevel {
    const root = this.#root.level;
    if (root === 'trace' || root === 'debug') return 'DEBUG';
    if (root === 'info') return 'INFO';
    if (root === 'warn') return 'WARN';
    return 'ERROR';
  }
}

/** STTRACE's list, as Syncthing reads it: names separated by commas or spaces. */
export function parseFacilityList(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '');
}
