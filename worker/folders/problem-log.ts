import type { Logger } from '../../shared/logger.ts';
import { RateLimitedLog } from '../../shared/rate-limited-log.ts';
import type { WalkProblem } from '../scanner/walk.ts';

export interface ProblemLogOptions {
  logger: Logger;
  folder: string;
  /** The recent errors' slot its warnings share. */
  slot: string;
  /** The warning of a problem. */
  text: (problem: WalkProblem) => string;
  /** The line, at info, of a name whose problem is over; none when absent. */
  over?: (name: string) => string;
  /** Passed to RateLimitedLog: for tests. */
  now?: () => number;
}

/**
 * A folder's problems of one kind (what its scans cannot read, what its pulls cannot bring), found
 * again at every rescan or retry: each logged at once, then as RateLimitedLog allows.
 */
export class ProblemLog {
  readonly #options: ProblemLogOptions;
  readonly #repeats: RateLimitedLog;

  constructor(options: ProblemLogOptions) {
    this.#options = options;
    this.#repeats = new RateLimitedLog({ now: options.now });
  }

  /**
   * The problems a scan or pull found among the names `inScope` covers: logged as they are new or
   * due again; those in scope it no longer found are over.
   */
  report(problems: readonly WalkProblem[], inScope: (name: string) => boolean = () => true): void {
    const { logger, folder, slot, text, over } = this.#options;
    const found = new Set<string>();
    for (const problem of problems) {
      found.add(problem.name);
      const repeated = this.#repeats.note(problem.name, problem.error);
      if (repeated !== undefined)
        logger.warn({ folder, path: problem.name, slot }, `${text(problem)}${repeated}`);
    }
    for (const name of this.#repeats.keys()) {
      if (found.has(name) || !inScope(name) || !this.#repeats.cleared(name) || !over) continue;
      logger.info({ folder, path: name }, over(name));
    }
  }
}
