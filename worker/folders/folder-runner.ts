import type { FileRecord } from '../records/file-record.ts';
import { type FSWatcher, watch } from 'node:fs';
import type { FolderConfiguration } from '../../shared/config/defaults.ts';
import type { Logger } from '../../shared/logger.ts';
import type { EventLog } from '../events/event-log.ts';
import { folderRoot, isInternal } from '../files/folder-fs.ts';
import { checkFolderRoot } from '../files/folder-root.ts';
import { NotAnsweringError, RootProbe } from '../files/root-probe.ts';
import type { IndexDb } from '../index-db/index-db.ts';
import type { HasherPool } from '../scanner/hasher-pool.ts';
import { IGNORE_FILE, Ignores } from '../scanner/ignores.ts';
import { scanFolder } from './scan-folder.ts';
import type { WalkProblem } from '../scanner/walk.ts';
import { completionReport, folderNeed } from '../index-db/global.ts';
import type { PullOptions, PullOrder } from '../sync/pull-folder.ts';
import { folderSummary } from './folder-summary.ts';
import { OwnWrites } from './own-writes.ts';
import { ProblemLog } from './problem-log.ts';
import { RateLimitedLog } from '../../shared/rate-limited-log.ts';
import { PullPriority } from '../sync/pull-priority.ts';
import { DEFAULT_PULL_PAUSE_MS, PullRetry } from './pull-retry.ts';
import { versionerFor } from '../versioning/for-folder.ts';
import type { IoLimiter } from './io-limiter.ts';
import type { Versioner } from '../versioning/versioner.ts';
import {
  adoptEqualVersions,
  type FolderChange,
  overrideRemoteChanges,
  revertLocalChanges,
} from '../sync/folder-types.ts';

/** Syncthing's folder states (st:lib/model/folderstate.go), but sync-preparing. */
export type FolderState =
  | 'idle'
  | 'scan-waiting'
  | 'scanning'
  | 'sync-waiting'
  | 'syncing'
  | 'clean-waiting'
  | 'cleaning'
  | 'error'
  | 'paused';

// Changes the watcher reports for more names than this are scanned as the whole folder.
const MAX_WATCHED_NAMES = 1000;
// How soon a folder that cannot go on (a full disk, a missing path) is looked at again.
const HEALTH_RECHECK_MS = 10_000;
// The least time from other devices' index updates to the summary they bring (Syncthing's pump interval).
const SUMMARY_EVERY_MS = 2000;

export interface FolderRunnerOptions {
  db: IndexDb;
  hasher: HasherPool;
  events: EventLog;
  shortId: bigint;
  logger: Logger;
  /** This device's ID, left out of the devices a folder's completion is told for. */
  myId?: string;
  /** The devices connected now: a folder's completion is told only for them. */
  connected?: () => ReadonlySet<string>;
  /** Hears every batch of local changes recorded, for the devices that share the folder. */
  onLocalUpdate?: (folder: string, records: FileRecord[]) => void;
  /** How long temporary files of pulls are kept (options.keepTemporariesH): older ones go at scans. */
  keepTemporariesH?: () => number;
  /** The turns all folders share for scans, pulls and cleanouts (options.maxFolderConcurrency). */
  limiter?: IoLimiter;
  /** Why the home's disk has too little space for the folders to go on (minHomeDiskFree), if it has. */
  homeSpace?: () => Promise<string | undefined>;
  /** How long a stat of the folder's root may take before its filesystem counts as not answering. */
  answerTimeoutMs?: number;
  /**
   * Brings the folder to what other devices have of it (see worker/sync/pull-folder.ts), telling
   * `writes` each item it begins and ends writing.
   */
  pull?: (
    folder: Required<Omit<PullOptions['folder'], 'versioner'>> & Pick<PullOptions['folder'], 'versioner'>,
    signal: AbortSignal,
    writes: Pick<OwnWrites, 'started' | 'finished'>,
  ) => Promise<{
    pulled: number;
    problems: WalkProblem[];
    toScan: string[];
    last?: { name: string; deleted: boolean; at: Date };
  }>;
}

/**
 * One folder of the configuration, in the worker that holds the service: its state, its scans (at
 * start, every rescanIntervalS, on request, and fsWatcherDelayS after the watcher saw a change), one
 * scan at a time, and the errors of the last one.
 */
export class FolderRunner {
  #config: FolderConfiguration;
  readonly #options: FolderRunnerOptions;
  #state: FolderState = 'idle';
  #stateChanged = new Date();
  #error: string | undefined;
  #problems: WalkProblem[] = [];
  #ignores = Ignores.none();
  #running: Promise<void> | undefined;
  #wanted: { subs: Set<string> | 'all'; waiters: Array<() => void> } | undefined;
  #rescanTimer: NodeJS.Timeout | undefined;
  #watchTimer: NodeJS.Timeout | undefined;
  #watcher: FSWatcher | undefined;
  #watched = new Set<string>();
  #abort = new AbortController();
  // Whether the folder's filesystem answers; what runs on the folder is given up on once it does not.
  #probe: RootProbe;
  // The scan or pull under way, stopped at its next step once given up on.
  #operation: AbortController | undefined;
  // An operation given up on, still out: nothing else runs on the folder until it returns.
  #unheard: Promise<void> | undefined;
  // What scans cannot read and pulls cannot bring comes back at every rescan and retry: logged at
  // once, then at most every 10 minutes while it goes on (see shared/rate-limited-log.ts).
  readonly #scanLog: ProblemLog;
  readonly #pullLog: ProblemLog;
  readonly #pullFailures = new RateLimitedLog();
  #stopped = false;
  #scannedOnce = false;
  #pullWanted = false;
  #lastScan: Date | undefined;
  #lastFile: { name: string; deleted: boolean; at: Date } | undefined;
  #pullProblems: WalkProblem[] = [];
  // What the watcher reports of the pull's own writes is not a change.
  readonly #ownWrites = new OwnWrites();
  /** Files a user asked to have first (POST /rest/db/prio). */
  readonly #priority = new PullPriority();
  // A pull that left items undone is tried again later, the pause growing (see pull-retry.ts).
  readonly #pullRetry = new PullRetry(() =>
    this.#config.pullerPauseS > 0 ? this.#config.pullerPauseS * 1000 : DEFAULT_PULL_PAUSE_MS,
  );
  #retryTimer: NodeJS.Timeout | undefined;
  #retrying = false;
  // Files to read again at the next scan whatever their size and time say (see recheck).
  #rehash = new Set<string>();
  // The folder's versioning (none when its type is ''), made from its configuration, and its cleanout.
  #versioner: { for: FolderConfiguration['versioning']; versioner: Versioner | undefined } | undefined;
  #cleanupTimer: NodeJS.Timeout | undefined;
  // The folder cannot go on (see #failHealth): it is looked at again soon, not at the rescan interval.
  #unhealthy = false;
  // Overrides and reverts asked for: run between scans and pulls, never during one.
  #changes: PendingChange[] = [];
  #summaryTimer: NodeJS.Timeout | undefined;
  /** A summary that waits for a client to watch the events (see #summarizeWhenWatched). */
  #summaryWaiting: NodeJS.Timeout | undefined;
  /** How long the last summary after other devices' index updates took this thread. */
  #summaryCostMs = 0;

  constructor(config: FolderConfiguration, options: FolderRunnerOptions) {
    this.#config = config;
    this.#options = options;
    this.#probe = new RootProbe(() => this.path, options.answerTimeoutMs);
    const { logger } = options;
    const folder = config.id;
    this.#scanLog = new ProblemLog({
      logger,
      folder,
      slot: `folder-${folder}`,
      text: (p) => `folder ${folder}: ${p.name}: ${p.error}`,
    });
    this.#pullLog = new ProblemLog({
      logger,
      folder,
      slot: `folder-${folder}-pull`,
      text: (p) => `folder ${folder}: cannot pull ${p.name}: ${p.error}`,
      over: (name) => `folder ${folder}: ${name} no longer fails to pull`,
    });
  }

  get id(): string {
    return this.#config.id;
  }

  get config(): FolderConfiguration {
    return this.#config;
  }

  get state(): FolderState {
    return this.#state;
  }

  get stateChanged(): Date {
    return this.#stateChanged;
  }

  /** Why the folder is in the error state, if it is. */
  get error(): string | undefined {
    return this.#error;
  }

  /** The ignore patterns the last scan applied. */
  get ignores(): Ignores {
    return this.#ignores;
  }

  /** What the last scan could not take, and what the last pull could not bring. */
  get problems(): readonly WalkProblem[] {
    return [...this.#problems, ...this.#pullProblems];
  }

  /** Syncthing's GET /rest/stats/folder entry: the last file pulled, and when the last scan ended. */
  get stats() {
    return {
      lastFile: {
        at: (this.#lastFile?.at ?? new Date(0)).toISOString(),
        filename: this.#lastFile?.name ?? '',
        deleted: this.#lastFile?.deleted ?? false,
      },
      lastScan: (this.#lastScan ?? new Date(0)).toISOString(),
    };
  }

  /** How many items the last pull could not bring. */
  get pullProblems(): number {
    return this.#pullProblems.length;
  }

  /**
   * A file whose content on disk is not what the index says, though its size and time are (a block
   * served did not match): scanned again, its content read whatever they say, so that the change
   * reaches the other devices (Syncthing's recheckFile).
   */
  recheck(name: string): void {
    if (this.#rehash.has(name) || this.#rehash.size >= MAX_WATCHED_NAMES) return;
    this.#rehash.add(name);
    void this.scan([name]);
  }

  /** The folder's versioning, as its configuration says now; undefined without one. */
  get versioner(): Versioner | undefined {
    const { versioning, id, markerName } = this.#config;
    if (this.#versioner?.for !== versioning) {
      const warn = (error: Error) =>
        this.#options.logger.warn(
          { folder: id, slot: `folder-${id}-versions` },
          `folder ${id}: ${error.message}`,
        );
      this.#versioner = {
        for: versioning,
        versioner: versionerFor({ id, path: this.path, markerName, versioning }, undefined, warn),
      };
    }
    return this.#versioner.versioner;
  }

  /** Pulls `name` before the other files, in this pull if one runs, else in the next. */
  bringToFront(name: string): void {
    this.#priority.bringToFront(name);
  }

  /** Asks for a pull (other devices have something new); runs after any scan under way. */
  pullSoon(): void {
    if (this.#stopped || this.#config.paused || !this.#options.pull || this.#config.type === 'sendonly')
      return;
    this.#pullWanted = true;
    this.#running ??= this.#run();
  }

  /**
   * Another device sent an index of the folder: a pull, whose end tells the folder's summary and
   * completions; a folder that does not pull (send-only, paused) tells them at once, unless busy.
   */
  remoteUpdated(): void {
    const pulls = !this.#config.paused && this.#options.pull && this.#config.type !== 'sendonly';
    if (pulls) {
      this.pullSoon();
      return;
    }
    // Paced as Syncthing paces its summaries (lib/model/folder_summary.go): an index comes in many
    // batches, and each summary reads what changed for every device, so one runs 2 s after the first
    // batch at the earliest, and twice as long again as the last one took (with four devices and a
    // folder pulled whole, the last could take half a second of this thread, while it served blocks);
    // and only while a client watches the events (see #summarizeWhenWatched).
    this.#summaryTimer ??= setTimeout(
      () => {
        this.#summaryTimer = undefined;
        if (this.#running || this.#stopped) return;
        const started = performance.now();
        // A send-only folder takes the versions of what it has the same already (then summarized).
        const { db } = this.#options;
        const { id, ignorePerms, modTimeWindowS, type, paused } = this.#config;
        const adopted =
          type === 'sendonly' && !paused && adoptEqualVersions(db, { id, ignorePerms, modTimeWindowS });
        // Nothing runs now, so the change is made at once, from what was just found.
        if (adopted && adopted.records.length > 0) this.#change(async () => adopted).catch(() => {});
        else this.#summarizeWhenWatched();
        this.#summaryCostMs = performance.now() - started;
      },
      SUMMARY_EVERY_MS + 2 * this.#summaryCostMs,
    );
    this.#summaryTimer.unref();
  }

  /** The folder's path with a leading ~ made the home folder, as Syncthing expands it. */
  get path(): string {
    const { path } = this.#config;
    return folderRoot(path);
  }

  start(): void {
    this.#scheduleCleanup();
    if (this.#config.paused) {
      this.#setState('paused');
      return;
    }
    // Syncthing's lines for a folder's start and first scan (lib/model/model.go), for the log viewer.
    this.#options.logger.info({ folder: this.id }, `Ready to synchronize ${this.#described()}`);
    void this.scan();
  }

  #described(): string {
    const { label, id, type } = this.#config;
    return `${label ? `"${label}" (${id})` : `"${id}"`} (${type})`;
  }

  /** A new configuration of the same folder: paused, resumed, or changed. */
  reconfigure(config: FolderConfiguration): void {
    const before = this.#config;
    this.#config = config;
    if (before.path !== config.path)
      this.#probe = new RootProbe(() => this.path, this.#options.answerTimeoutMs);
    if (
      before.versioning.cleanupIntervalS !== config.versioning.cleanupIntervalS ||
      before.versioning.type !== config.versioning.type
    ) {
      this.#scheduleCleanup();
    }
    if (config.paused && !before.paused) {
      this.#stopWatching();
      this.#clearRescan();
      this.#setState('paused');
    } else if (
      !config.paused &&
      (before.paused || before.path !== config.path || before.markerName !== config.markerName)
    ) {
      this.#stopWatching();
      this.#setState('idle');
      void this.scan();
    } else if (!config.paused) {
      if (before.fsWatcherEnabled !== config.fsWatcherEnabled) this.#stopWatching();
      this.#scheduleRescan();
      this.#watch();
    }
  }

  /**
   * Scans the folder (or the names `subs` and what is below them); resolves once a scan that began after
   * this call has ended. A paused or stopped folder is not scanned.
   */
  scan(subs?: string[]): Promise<void> {
    if (this.#stopped || this.#config.paused) return Promise.resolve();
    return new Promise((resolve) => {
      const wanted = (this.#wanted ??= { subs: new Set(), waiters: [] });
      if (!subs || subs.length === 0 || subs.includes('')) wanted.subs = 'all';
      else if (wanted.subs !== 'all') for (const sub of subs) wanted.subs.add(sub);
      wanted.waiters.push(resolve);
      // A folder that cannot go on is looked at again without leaving its error state meanwhile: no
      // pair of events every 10 s while it waits for space.
      if (this.#state === 'idle' || (this.#state === 'error' && !this.#unhealthy)) {
        this.#setState('scan-waiting');
      }
      this.#running ??= this.#run();
    });
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#abort.abort();
    clearTimeout(this.#summaryTimer);
    clearTimeout(this.#summaryWaiting);
    this.#clearRescan();
    if (this.#retryTimer) clearTimeout(this.#retryTimer);
    clearTimeout(this.#cleanupTimer);
    this.#stopWatching();
    // What the abort ended (a turn waited for, a scan or pull under way) ends with an AbortError: a
    // stop asked for is no failure.
    await this.#running?.catch((error: unknown) => {
      if (!(error instanceof Error && error.name === 'AbortError')) throw error;
    });
    for (const resolve of this.#wanted?.waiters.splice(0) ?? []) resolve();
  }

  async #run(): Promise<void> {
    // Never ended within the call that starts it, so that `#running ??= this.#run()` never keeps an ended one.
    await Promise.resolve();
    try {
      // Scans and pulls take turns, never at once: a scan must never take a file being pulled for a
      // local change.
      while ((this.#wanted || this.#pullWanted || this.#changes.length > 0) && !this.#stopped) {
        if (this.#unheard) {
          this.#answerWaiting();
          break;
        }
        const change = this.#changes.shift();
        if (change) {
          await this.#changeOnce(change);
        } else if (this.#wanted) {
          const { subs, waiters } = this.#wanted;
          this.#wanted = undefined;
          const changed = await this.#scanOnce(subs === 'all' ? undefined : [...subs]);
          for (const resolve of waiters) resolve();
          // What devices have may be needed now that this one's files are known (nothing is, while
          // no device has sent an index of the folder); a scan that found nothing changes no need.
          if (changed && this.#state === 'idle' && this.#options.db.hasRemote(this.id)) {
            if (this.#config.type === 'sendonly') this.remoteUpdated();
            else this.pullSoon();
          }
        } else {
          this.#pullWanted = false;
          await this.#pullOnce();
        }
      }
    } finally {
      this.#running = undefined;
    }
  }

  /**
   * Scans, unless the folder cannot be (its disk, the home's disk): then it is in error, looked at
   * again shortly. Answers whether a pull should follow: the scan recorded a change, or the folder
   * came out of an error.
   */
  async #scanOnce(under: string[] | undefined): Promise<boolean> {
    const problem = (await this.#homeSpace()) ?? (await this.#checkPath());
    if (problem) {
      if (!this.#stopped) this.#failHealth(problem);
      return false;
    }
    const wasInError = this.#state === 'error' || this.#error !== undefined;
    this.#error = undefined;
    this.#unhealthy = false;
    const release = await this.#turn('scan-waiting');
    if (!release) return false;
    try {
      return await this.#scanTurn(under, wasInError);
    } finally {
      release();
    }
  }

  async #scanTurn(under: string[] | undefined, wasInError: boolean): Promise<boolean> {
    const { db, hasher, events, shortId, logger } = this.#options;
    this.#setState('scanning');
    const folder = {
      ...this.#config,
      path: this.path,
      receiveOnly: this.#config.type === 'receiveonly',
      keepTemporariesH: this.#options.keepTemporariesH?.(),
    };
    const rehash = this.#rehash;
    this.#rehash = new Set();
    // What the first scan of the folder's index finds was there before: no change to tell. An empty
    // folder's index stays empty after it, so this runner remembers that it has scanned.
    const firstScan = !this.#scannedOnce && db.folder(folder.id).sequence === 0;
    const started = Date.now();
    let lastProgress = 0;
    // Syncthing's scanProgressIntervalS: 0 is every 2 s, a negative number none.
    const progressEvery = this.#config.scanProgressIntervalS;
    const progressMs = progressEvery > 0 ? progressEvery * 1000 : progressEvery < 0 ? Infinity : 2000;
    try {
      const result = await this.#whileAnswering(
        scanFolder({
          folder,
          db,
          hasher,
          shortId,
          under,
          rehash,
          signal: this.#operationSignal(),
          onBatch: (records) => this.#localUpdated(records),
          onProgress: (current, total) => {
            const now = Date.now();
            if (now - lastProgress < progressMs) return;
            lastProgress = now;
            const rate = current / Math.max(0.001, (now - started) / 1000);
            events.log('FolderScanProgress', { folder: folder.id, current, total, rate });
          },
        }),
      );
      if (this.#stopped) return false;
      this.#ignores = result.ignores;
      if (!firstScan) {
        for (const change of result.changes) {
          if (change.action === 'ignored') continue;
          events.log('LocalChangeDetected', {
            action: change.action,
            folder: folder.id,
            folderID: folder.id,
            label: folder.label,
            path: change.name,
            type: change.type === 'directory' ? 'dir' : change.type,
          });
        }
      }
      const before = this.#problems;
      this.#problems = under
        ? [...before.filter((p) => !under.some((sub) => inside(p.name, sub))), ...result.problems]
        : result.problems;
      if (this.#problems.length > 0 || before.length > 0) {
        events.log('FolderErrors', {
          folder: folder.id,
          errors: this.#problems.map((p) => ({ error: p.error, path: p.name })),
        });
      }
      this.#scanLog.report(result.problems, (name) => !under || under.some((sub) => inside(name, sub)));
      logger.debug(
        { folder: folder.id, changes: result.changes.length, ms: Date.now() - started },
        `folder ${folder.id}: scanned${under ? ` ${under.join(', ')}` : ''}: ${result.changes.length} changes`,
      );
      const first = !this.#scannedOnce;
      if (first) logger.info({ folder: folder.id }, `Completed initial scan of ${this.#described()}`);
      this.#scannedOnce = true;
      this.#lastScan = new Date();
      this.#setState('idle');
      this.#summarize();
      this.#scheduleRescan();
      this.#watch();
      return result.written > 0 || first || wasInError;
    } catch (error) {
      if (this.#stopped) return false;
      if (error instanceof NotAnsweringError) {
        this.#failHealth(error.message);
        return false;
      }
      // A disk that filled during the scan is the home's problem, named as such and looked at again.
      const space = await this.#homeSpace();
      if (space) {
        this.#failHealth(space);
        return false;
      }
      this.#error = `scan failed: ${(error as Error).message}`;
      logger.error({ err: error, folder: folder.id }, `folder ${folder.id}: ${this.#error}`);
      this.#setState('error');
      this.#scheduleRescan();
      return false;
    }
  }

  // The home's disk, where the index is, must keep its minHomeDiskFree: else nothing is scanned or pulled.
  async #homeSpace(): Promise<string | undefined> {
    return (await this.#options.homeSpace?.().catch(() => undefined)) ?? undefined;
  }

  /**
   * The folder cannot go on (its path, its marker, the home's disk): in error, and scanned again in
   * HEALTH_RECHECK_MS, so that it goes on by itself once the problem is gone (Syncthing looks again at
   * its next scan only).
   */
  #failHealth(problem: string): void {
    const before = this.#error;
    this.#error = problem;
    this.#setState('error');
    if (before !== problem) {
      this.#options.logger.warn(
        { folder: this.#config.id, slot: `folder-${this.#config.id}-health` },
        `folder ${this.#config.id}: ${problem}`,
      );
    }
    this.#stopWatching();
    this.#unhealthy = true;
    this.#scheduleRescan();
  }

  /**
   * Syncthing's override of a send-only folder: this device's versions made newer than everyone's, sent
   * to the others. Resolves once recorded.
   */
  override(): Promise<void> {
    const { db, shortId } = this.#options;
    return this.#change(async () => overrideRemoteChanges(db, this.id, shortId));
  }

  /**
   * Syncthing's revert of a receive-only folder: the changes kept here given up for the others'
   * versions, which the pull that follows brings. Resolves once recorded.
   */
  revert(): Promise<void> {
    const { db, shortId } = this.#options;
    const { id, ignorePerms } = this.#config;
    return this.#change(() => revertLocalChanges(db, { id, path: this.path, ignorePerms }, shortId));
  }

  // Local changes recorded: told as Syncthing's LocalIndexUpdated, and sent to the devices.
  #localUpdated(records: FileRecord[]): void {
    const last = records.at(-1);
    this.#options.events.log('LocalIndexUpdated', {
      folder: this.id,
      items: records.length,
      filenames: records.slice(0, 100).map((record) => record.name),
      sequence: last?.sequence ?? 0,
      version: last?.sequence ?? 0,
    });
    this.#options.onLocalUpdate?.(this.id, records);
  }

  #change(
    make: () => Promise<FolderChange>,
    state?: PendingChange['state'],
    waiting?: PendingChange['waiting'],
  ): Promise<void> {
    if (this.#stopped) return Promise.reject(new Error(`folder ${this.id} is stopping`));
    return new Promise((resolve, reject) => {
      this.#changes.push({ make, state, waiting, done: (error) => (error ? reject(error) : resolve()) });
      this.#running ??= this.#run();
    });
  }

  async #changeOnce(change: PendingChange): Promise<void> {
    const { db, logger } = this.#options;
    const release = change.waiting ? await this.#turn(change.waiting) : () => {};
    // Stopped or paused meanwhile: no cleanout then, as in Syncthing.
    if (!release) return change.done();
    this.#setState(change.state ?? 'scanning');
    try {
      const { records, problems } = await this.#whileAnswering(change.make());
      if (records.length > 0) this.#localUpdated(db.update(this.id, records));
      for (const p of problems)
        logger.warn({ folder: this.id, path: p.name }, `folder ${this.id}: ${p.name}: ${p.error}`);
      change.done();
    } catch (error) {
      if (error instanceof NotAnsweringError) this.#failHealth(error.message);
      change.done(error as Error);
    } finally {
      release();
    }
    // A folder that cannot go on (its disk, its path) stays in error: the change does not hide it.
    this.#setState(this.#error ? 'error' : 'idle');
    if (change.state === 'cleaning') return;
    this.#summarize();
    if (db.hasRemote(this.id)) this.pullSoon();
  }

  async #pullOnce(): Promise<void> {
    const { pull, events, logger } = this.#options;
    if (!pull || this.#config.paused || this.#state === 'error') return;
    // A pull asked for meanwhile replaces the retry waiting (as Syncthing's pull stops its fail timer).
    const retry = this.#retrying;
    this.#retrying = false;
    if (this.#retryTimer) clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
    const space = await this.#homeSpace();
    if (space) {
      this.#failHealth(space);
      return;
    }
    // Send-only folders never pull here: what they do instead takes no turn, as in Syncthing.
    const release = await this.#turn('sync-waiting');
    if (!release) return;
    const started = Date.now();
    let failed: boolean;
    const { id, ignorePerms, ignoreDelete, label, maxConflicts, order, markerName, minDiskFree } =
      this.#config;
    const { caseSensitiveFS } = this.#config;
    this.#setState('syncing');
    try {
      const signal = this.#operationSignal();
      // Read again, as Syncthing reads them before each pull: nothing ignored is pulled, changed or deleted.
      this.#ignores = await this.#whileAnswering(Ignores.load(this.path));
      const folder = {
        ...{ id, path: this.path, ignorePerms, ignoreDelete, label, maxConflicts, markerName, minDiskFree },
        // The configuration's decoding admits Syncthing's six orders only.
        order: order as PullOrder,
        ignores: this.#ignores,
        caseSensitiveFS,
        versioner: this.versioner,
        priority: this.#priority,
      };
      const { problems, toScan, last } = await this.#whileAnswering(pull(folder, signal, this.#ownWrites));
      failed = problems.length > 0;
      logger.debug(
        { folder: id, problems: problems.length, ms: Date.now() - started },
        `folder ${id}: pulled, ${problems.length} problems`,
      );
      if (last) this.#lastFile = last;
      // A conflict copy is a new local file: scanned at once, so that the other devices get it; so is
      // a directory that could not be deleted for what is in it.
      if (toScan.length > 0) void this.scan(toScan);
      const before = this.#pullProblems;
      this.#pullProblems = problems;
      if (problems.length > 0 || before.length > 0) {
        events.log('FolderErrors', {
          folder: id,
          errors: this.problems.map((p) => ({ error: p.error, path: p.name })),
        });
      }
      this.#pullLog.report(problems);
      this.#pullFailures.cleared('pull');
    } catch (error) {
      failed = true;
      if (error instanceof NotAnsweringError) this.#failHealth(error.message);
      else {
        const { message } = error as Error;
        const repeated = this.#pullFailures.note('pull', message);
        if (repeated !== undefined)
          logger.error({ err: error, folder: id }, `folder ${id}: pull failed: ${message}${repeated}`);
      }
    } finally {
      this.#ownWrites.ended();
      release();
    }
    if (this.#stopped) return;
    if (failed) this.#retryLater(this.#pullRetry.failed(Date.now() - started, retry));
    else this.#pullRetry.succeeded();
    this.#setState(this.#error ? 'error' : 'idle');
    this.#summarize();
  }

  /**
   * A summary now if a client watches the events; otherwise it waits until one does, looked at again
   * at Syncthing's pace. As in Syncthing, where nobody would see them: a device pulling the folder
   * sends index updates all along, and each summary reads what changed for every device sharing it
   * (50 to 140 ms of this thread in the bench's transfers, more with each device, while it serves
   * blocks).
   */
  #summarizeWhenWatched(): void {
    clearTimeout(this.#summaryWaiting);
    if (this.#options.events.watched) {
      this.#summarize();
      return;
    }
    this.#summaryWaiting = setTimeout(() => {
      if (!this.#running && !this.#stopped) this.#summarizeWhenWatched();
    }, SUMMARY_EVERY_MS);
    this.#summaryWaiting.unref();
  }

  /**
   * FolderSummary, and a FolderCompletion for each other device sharing the folder that is connected
   * (what it lacks of the global versions), as Syncthing's summary service logs them once a folder's
   * state settles.
   */
  #summarize(): void {
    clearTimeout(this.#summaryWaiting);
    const { db, events, myId, connected } = this.#options;
    events.log('FolderSummary', { folder: this.id, summary: folderSummary(this, db) });
    if (!db.hasRemote(this.id)) return;
    for (const { deviceID } of this.#config.devices) {
      // Not of a device that is not connected, as Syncthing leaves them out.
      if (deviceID === myId || (connected && !connected().has(deviceID))) continue;
      const report = completionReport(
        folderNeed(db, this.id, deviceID),
        db.remoteIndex(this.id, deviceID).maxSequence,
      );
      events.log('FolderCompletion', { folder: this.id, device: deviceID, ...report });
    }
  }

  /**
   * Whether the folder can be scanned: its path and marker there. A folder never indexed gets both
   * made, as Syncthing makes them for a new folder; one indexed before whose disk is gone is an error,
   * so that nothing is recorded as deleted because a disk is not mounted.
   */
  async #checkPath(): Promise<string | undefined> {
    const silent = await this.#probe.answers();
    if (silent) return silent;
    const neverIndexed = this.#options.db.folder(this.#config.id).sequence === 0 && !this.#scannedOnce;
    return this.#whileAnswering(checkFolderRoot(this.path, this.#config.markerName, neverIndexed)).catch(
      (error: Error) => error.message,
    );
  }

  /**
   * What `operation` does on the folder's files, for a request outside its turns (its ignore patterns,
   * its versions): refused at once while the folder's filesystem does not answer, and given up on (a
   * NotAnsweringError) if it stops answering meanwhile.
   */
  async answering<T>(operation: () => Promise<T>): Promise<T> {
    const silent = await this.#probe.answers();
    if (silent) {
      this.#failWhileIdle(silent);
      throw new NotAnsweringError(silent);
    }
    return this.#probe.watch(operation()).catch((error: unknown) => {
      if (error instanceof NotAnsweringError) this.#failWhileIdle(error.message);
      throw error;
    });
  }

  // What a request found out puts an idle folder in error too, so that its status says what its answer
  // said; a folder mid-operation is put there by that operation's own watch.
  #failWhileIdle(problem: string): void {
    if (!this.#stopped && this.state === 'idle') this.#failHealth(problem);
  }

  /** Resolves once no operation given up on (see #whileAnswering) is still out. */
  get settled(): Promise<void> {
    return this.#unheard ?? Promise.resolve();
  }

  /**
   * `operation`, unless the folder's filesystem stops answering first: then it is given up on (a
   * NotAnsweringError), told to stop at its next step, and nothing else runs on the folder until it
   * returns (a dead mount holds it in a system call), when the folder is looked at again. Its turn
   * of the limiter goes back meanwhile, and whoever waits on the folder is answered.
   */
  #whileAnswering<T>(operation: Promise<T>): Promise<T> {
    return this.#probe.watch(operation).catch((error: unknown) => {
      if (error instanceof NotAnsweringError) {
        this.#operation?.abort();
        this.#unheard = operation.then(
          () => this.#heardAgain(),
          () => this.#heardAgain(),
        );
      }
      throw error;
    });
  }

  #heardAgain(): void {
    this.#unheard = undefined;
    this.#probe.forget();
    if (!this.#stopped && !this.#config.paused) void this.scan();
  }

  // A signal for the scan or pull starting: aborted when the folder stops, or when it is given up on.
  #operationSignal(): AbortSignal {
    this.#operation = new AbortController();
    return AbortSignal.any([this.#abort.signal, this.#operation.signal]);
  }

  // While an operation given up on is out, whoever waits on the folder is answered with its error.
  #answerWaiting(): void {
    // Resumed or moved meanwhile, the folder may have left the error state: it is still not answering.
    if (this.#state !== 'error' || !this.#error) {
      this.#failHealth(
        this.#error ?? "the folder's filesystem is not answering: a call on it has not returned",
      );
    }
    const why = new NotAnsweringError(this.#error ?? '');
    for (const resolve of this.#wanted?.waiters ?? []) resolve();
    this.#wanted = undefined;
    this.#pullWanted = false;
    for (const change of this.#changes.splice(0)) change.done(why);
  }

  /**
   * A turn of the limiter all folders share (maxFolderConcurrency), waited for in the state `waiting`
   * as Syncthing's folder waits (lib/model/folder.go): what gives it back, or undefined if the folder
   * stopped or was paused first (Syncthing stops a paused folder's service, and its wait with it).
   */
  async #turn(waiting: FolderState): Promise<(() => void) | undefined> {
    if (this.#config.paused) return undefined;
    this.#setState(waiting);
    const { limiter } = this.#options;
    if (!limiter) return () => {};
    const release = await limiter.take(this.#abort.signal).catch(() => undefined);
    if (release && this.#config.paused) release();
    return this.#config.paused ? undefined : release;
  }

  #setState(state: FolderState): void {
    if (state === this.#state) return;
    const now = new Date();
    const from = this.#state;
    const duration = (now.getTime() - this.#stateChanged.getTime()) / 1000;
    this.#state = state;
    this.#stateChanged = now;
    this.#options.events.log('StateChanged', { folder: this.#config.id, from, to: state, duration });
  }

  /**
   * The versions' cleanout every versioning.cleanupIntervalS (0: never), the first one interval after
   * the start, as Syncthing's folder does; its failures are logged, and the next one comes anyway.
   */
  #scheduleCleanup(): void {
    clearTimeout(this.#cleanupTimer);
    const seconds = this.#config.versioning.cleanupIntervalS;
    // A send-only folder deletes and replaces nothing, and is never cleaned (Syncthing gives it no versioner).
    if (this.#stopped || seconds <= 0 || !this.versioner || this.#config.type === 'sendonly') return;
    this.#cleanupTimer = setTimeout(
      () => {
        // A paused folder is not cleaned, as in Syncthing (it does not run); the next time may find it
        // running. The cleanout takes its turn between scans and pulls: never beside a pull archiving.
        if (this.#config.paused || !this.versioner) return this.#scheduleCleanup();
        const versioner = this.versioner;
        const { id } = this.#config;
        void this.#change(
          async () => {
            await versioner.clean();
            return { records: [], problems: [] };
          },
          'cleaning',
          // After a turn of the limiter, as Syncthing's cleanout waits for one (lib/model/folder.go).
          'clean-waiting',
        )
          .catch((error: Error) => {
            if (this.#stopped) return;
            this.#options.logger.warn(
              { folder: id, slot: `folder-${id}-versions` },
              `folder ${id}: ${error.message}`,
            );
          })
          .finally(() => this.#scheduleCleanup());
      },
      Math.min(seconds * 1000, 2 ** 31 - 1),
    );
    this.#cleanupTimer.unref();
  }

  // A pull that left items undone is tried again after `delayMs` (see pull-retry.ts).
  #retryLater(delayMs: number): void {
    if (this.#retryTimer) clearTimeout(this.#retryTimer);
    // A timer past 2^31 - 1 ms fires at once: the longest pauses (pullerPauseS of hours) wait that long.
    delayMs = Math.min(delayMs, 2 ** 31 - 1);
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = undefined;
      this.#retrying = true;
      this.pullSoon();
    }, delayMs);
    this.#retryTimer.unref();
  }

  #scheduleRescan(): void {
    this.#clearRescan();
    const seconds = this.#unhealthy ? HEALTH_RECHECK_MS / 1000 : this.#config.rescanIntervalS;
    if (seconds <= 0 || this.#stopped || this.#config.paused) return;
    this.#rescanTimer = setTimeout(() => void this.scan(), Math.min(seconds * 1000, 2 ** 31 - 1));
    this.#rescanTimer.unref();
  }

  #clearRescan(): void {
    if (this.#rescanTimer) clearTimeout(this.#rescanTimer);
    this.#rescanTimer = undefined;
  }

  // The watcher is a hint: what it reports is scanned fsWatcherDelayS later, all at once; the
  // periodic rescan stays the source of truth.
  #watch(): void {
    if (
      this.#watcher ||
      !this.#config.fsWatcherEnabled ||
      this.#stopped ||
      this.#config.paused ||
      this.#error
    )
      return;
    try {
      this.#watcher = watch(this.path, { recursive: true }, (_event, name) => {
        if (name === null) this.#watched.add('');
        else {
          const relative = String(name).split('\\').join('/');
          // New ignore patterns change what the whole folder holds.
          if (relative === IGNORE_FILE) this.#watched.add('');
          // The folder's own names and temporaries, and what the service itself writes, are no change.
          else if (isInternal(relative, this.#config.markerName) || this.#ownWrites.isOwn(relative)) return;
          else this.#watched.add(relative);
        }
        this.#watchTimer ??= setTimeout(() => {
          this.#watchTimer = undefined;
          const names = [...this.#watched];
          this.#watched.clear();
          // A name reported may be gone: scanning it records the deletion.
          void this.scan(names.length > MAX_WATCHED_NAMES || names.includes('') ? undefined : names);
        }, this.#config.fsWatcherDelayS * 1000);
      });
      this.#watcher.on('error', (error) => {
        this.#options.logger.warn(
          { folder: this.#config.id },
          `folder ${this.#config.id}: the file watcher failed (${error.message}); changes are found by the periodic rescan`,
        );
        this.#stopWatching();
      });
    } catch (error) {
      this.#options.logger.warn(
        { folder: this.#config.id },
        `folder ${this.#config.id}: no file watcher (${(error as Error).message}); changes are found by the periodic rescan`,
      );
    }
  }

  #stopWatching(): void {
    this.#watcher?.close();
    this.#watcher = undefined;
    if (this.#watchTimer) clearTimeout(this.#watchTimer);
    this.#watchTimer = undefined;
    this.#watched.clear();
  }
}

interface PendingChange {
  make: () => Promise<FolderChange>;
  /** What the folder is doing meanwhile (default scanning: an override or a revert). */
  state?: FolderState;
  /** The state while it waits for a turn of the folders' limiter; none is taken without one. */
  waiting?: FolderState;
  done: (error?: Error) => void;
}

function inside(name: string, sub: string): boolean {
  return sub === '' || name === sub || name.startsWith(`${sub}/`);
}
