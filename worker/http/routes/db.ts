import type { FastifyInstance, FastifyPluginOptions, FastifyReply, FastifyRequest } from 'fastify';
import type { WorkerConfig } from '../../config/worker-config.ts';
import { shortIdString } from '../../../shared/device-id.ts';
import { folderSummary, SYNTHETIC_SIZE } from '../../folders/folder-summary.ts';
import { type FileRecord, isInvalid, REST_TYPE_NAMES, versionStrings } from '../../index-db/file-record.ts';
import { type IndexDb, LOCAL } from '../../index-db/index-db.ts';
import { globalVersion } from '../../index-db/versions.ts';
import { completionReport, type FolderNeed, folderNeed, fullRecords } from '../../sync/need.ts';
import type { SyncService } from '../../service/open-service.ts';
import type { FolderRunner } from '../../folders/folder-runner.ts';
import { join } from 'node:path';
import { writeFileAtomic } from '../../../shared/home.ts';
import { IGNORE_FILE, Ignores } from '../../scanner/ignores.ts';
import { HttpError, invalidQuery, noSuch } from '../http-errors.ts';
import { checkedDeviceId } from './config.ts';

export interface DbRouteOptions extends FastifyPluginOptions {
  config: WorkerConfig;
  /** The service, while this worker holds it. */
  service: () => SyncService | undefined;
}

/**
 * Syncthing's /rest/db endpoints and GET /rest/folder/errors, in its shapes, answered from the index
 * of the worker that holds the service (503 for the moment it changes hands). Registered without a
 * prefix.
 */
export async function dbRoutes(app: FastifyInstance, options: DbRouteOptions): Promise<void> {
  const { config } = options;
  // Everything here is in the query but the ignore lines posted: a body is kept as text, whatever its
  // type says, and read as JSON only there (as in Syncthing).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));
  // The folder asked for: 404 when it is not configured, 503 while no worker holds the index.
  const folderOf = (request: FastifyRequest) => {
    const id = query(request).folder ?? '';
    if (!config.current.folders.some((folder) => folder.id === id)) {
      throw noSuch(id === '' ? 'no such folder: give ?folder=ID' : `no such folder: ${JSON.stringify(id)}`);
    }
    const service = held(options);
    const runner = service.folders?.get(id);
    return { id, service, runner, db: service.db };
  };

  app.get('/rest/db/status', async (request) => {
    const { id, service, runner, db } = folderOf(request);
    if (!runner || !db) return failedSummary(id, service.indexError ?? 'the folder is starting');
    return folderSummary(runner, db);
  });

  app.get('/rest/db/file', async (request) => {
    const { id, db } = folderOf(request);
    const name = query(request).file ?? '';
    const versions = db?.versionsOf(id, name) ?? [];
    const found = globalVersion(versions);
    if (!found) throw noSuch(`no such object in the index: ${JSON.stringify(name)} in folder ${id}`);
    const local = versions.find((entry) => entry.device === LOCAL)?.record;
    return {
      // The devices that have the global version, besides this one.
      availability: found.holders
        .filter((device) => device !== LOCAL)
        .map((device) => ({ id: device, fromTemporary: false })),
      global: restFile(found.global.record),
      // A name only other devices have is answered with an empty local record, as Syncthing does.
      local: restFile(local ?? NO_RECORD),
      // Syncthing maps modification times only on file systems that cannot keep them: none here.
      mtime: { err: null, value: { real: GO_ZERO_TIME, virtual: GO_ZERO_TIME } },
    };
  });

  app.post('/rest/db/scan', async (request, reply: FastifyReply) => {
    const { folder, sub } = request.query as { folder?: string; sub?: string | string[] };
    if (folder === undefined || folder === '') {
      const service = held(options);
      await Promise.all(service.folders?.all().map((runner) => runner.scan()) ?? []);
      return reply.code(200).send();
    }
    const { runner, service } = folderOf(request);
    if (!runner) throw notScannable(folder, service.indexError);
    if (runner.config.paused)
      throw new HttpError('SYNCD_ERR_FOLDER_PAUSED', `folder ${folder} is paused; resume it to scan`);
    const subs = (Array.isArray(sub) ? sub : sub === undefined ? [] : [sub]).map(cleanSub);
    await runner.scan(subs);
    if (runner.state === 'error') throw notScannable(folder, runner.error);
    return reply.code(200).send();
  });

  app.get('/rest/db/browse', async (request) => {
    const { id, db } = folderOf(request);
    const { prefix = '', levels, dirsonly } = query(request);
    const depth = levels === undefined || levels === '' ? -1 : Number.parseInt(levels, 10);
    if (Number.isNaN(depth)) throw invalidQuery(`levels must be a whole number, not "${levels}"`);
    return db
      ? browse(db, id, prefix.replace(/\/+$/, ''), depth, dirsonly !== undefined && dirsonly !== '')
      : [];
  });

  // What this device needs of the global versions, in Syncthing's pages (nothing is queued apart).
  app.get('/rest/db/need', async (request) => {
    const { id, db } = folderOf(request);
    const { page, perpage } = paging(request);
    const needed = db ? folderNeed(db, id).needed : [];
    const rest = needed
      .slice((page - 1) * perpage, page * perpage)
      .map((item) => restFile((db && fullRecords(db, id, item)?.global) ?? item.global));
    return { progress: [], queued: [], rest, page, perpage };
  });

  // What a device lacks of the global versions (Syncthing's remote need), in pages.
  app.get('/rest/db/remoteneed', async (request) => {
    const { id, db } = folderOf(request);
    const { device } = query(request);
    if (device === undefined || device === '') throw invalidQuery('give ?device=ID, the device asked about');
    const of = checkedDeviceId(device);
    if (!config.current.folders.find((f) => f.id === id)?.devices.some((d) => d.deviceID === of)) {
      throw noSuch(`folder ${id} is not shared with device ${of}`);
    }
    const { page, perpage } = paging(request);
    const needed = db ? folderNeed(db, id, of).needed : [];
    const files = needed
      .slice((page - 1) * perpage, page * perpage)
      .map((item) => restFile((db && fullRecords(db, id, item, of)?.global) ?? item.global));
    return { files, page, perpage };
  });

  // The changes kept on a receive-only folder (what a revert gives up), in pages.
  app.get('/rest/db/localchanged', async (request) => {
    const { id, db } = folderOf(request);
    const { page, perpage } = paging(request);
    const kept = db ? [...db.iterate(id)].filter((record) => record.receiveOnlyChanged) : [];
    const files = kept.slice((page - 1) * perpage, page * perpage).map(restFile);
    return { files, page, perpage };
  });

  // Syncthing's override (send-only) and revert (receive-only): answered once done, as the folder
  // takes turns between scans, pulls and these; 409 for a folder of another type.
  for (const [path, type, run] of [
    ['/rest/db/override', 'sendonly', (runner: FolderRunner) => runner.override()],
    ['/rest/db/revert', 'receiveonly', (runner: FolderRunner) => runner.revert()],
  ] as const) {
    app.post(path, async (request, reply: FastifyReply) => {
      const { id, runner, service } = folderOf(request);
      if (!runner) throw notScannable(id, service.indexError);
      if (runner.config.type !== type) {
        throw new HttpError(
          'SYNCD_ERR_FOLDER_TYPE',
          `folder ${id} is ${runner.config.type}: ${path} applies to ${type} folders only`,
        );
      }
      if (runner.config.paused)
        throw new HttpError('SYNCD_ERR_FOLDER_PAUSED', `folder ${id} is paused; resume it first`);
      await run(runner);
      return reply.code(200).send();
    });
  }

  app.get('/rest/db/completion', async (request) => {
    const { folder, device } = query(request);
    if (device !== undefined && device !== '') checkedDeviceId(device);
    const ids =
      folder === undefined || folder === ''
        ? config.current.folders.map((f) => f.id)
        : [folderOf(request).id];
    const service = held(options);
    // The device asked about (this one when none is named): what it lacks of each folder's global versions.
    const of =
      device === undefined || device === '' || device === config.myId ? LOCAL : checkedDeviceId(device);
    const total: FolderNeed = {
      global: { files: 0, directories: 0, symlinks: 0, deleted: 0, bytes: 0 },
      need: { files: 0, directories: 0, symlinks: 0, deleted: 0, bytes: 0 },
      needed: [],
    };
    for (const id of ids) {
      if (!service.db) continue;
      const { global, need } = folderNeed(service.db, id, of);
      for (const key of ['files', 'directories', 'symlinks', 'deleted', 'bytes'] as const) {
        total.global[key] += global[key];
        total.need[key] += need[key];
      }
    }
    // Syncthing gives the device's sequence of the folder (this device's own when none is named).
    const sequence =
      ids.length !== 1 || !service.db
        ? 0
        : of === LOCAL
          ? service.db.folder(ids[0] as string).sequence
          : service.db.remoteIndex(ids[0] as string, of).maxSequence;
    return completionReport(total, sequence);
  });

  // The folder's .stignore: its lines as written, and the patterns they expand to.
  const ignoresOf = (ignores: Ignores) => ({
    ignore: ignores.lines,
    expanded: ignores.lines ? ignores.expanded : null,
  });
  app.get('/rest/db/ignores', async (request) => {
    const { runner } = folderOf(request);
    if (!runner) return { ignore: null, expanded: null };
    return ignoresOf(await Ignores.load(runner.path));
  });
  app.post('/rest/db/ignores', async (request) => {
    const { runner, id, service } = folderOf(request);
    if (!runner) throw notScannable(id, service.indexError);
    let body: unknown;
    try {
      body = JSON.parse(String(request.body ?? ''));
    } catch (error) {
      throw invalidQuery(`the body must be JSON such as {"ignore": ["*.tmp"]}: ${(error as Error).message}`);
    }
    const lines = (body as { ignore?: unknown } | null)?.ignore;
    if (!Array.isArray(lines) || !lines.every((line) => typeof line === 'string')) {
      throw invalidQuery('the body must be {"ignore": [lines of .stignore]}');
    }
    const ignores = await Ignores.parse(lines, runner.path);
    await writeFileAtomic(
      join(runner.path, IGNORE_FILE),
      lines.length === 0 ? '' : `${lines.join('\n')}\n`,
      0o644,
    );
    // What the folder holds changed with the patterns: it is scanned whole.
    if (!runner.config.paused) await runner.scan();
    return ignoresOf(ignores);
  });

  app.get('/rest/folder/errors', async (request) => {
    const { id, runner } = folderOf(request);
    const { page, perpage } = paging(request);
    const errors = (runner?.problems ?? []).map((problem) => ({ path: problem.name, error: problem.error }));
    return { folder: id, errors: errors.slice((page - 1) * perpage, page * perpage), page, perpage };
  });
}

/** The service this worker holds; 503 with Retry-After for the moment it changes hands. */
export function held(options: { service: () => SyncService | undefined }): SyncService {
  const service = options.service();
  if (!service) {
    throw new HttpError(
      'SYNCD_ERR_SERVICE_UNAVAILABLE',
      'the index is changing hands between workers (a restart); try again in a moment',
      { 'retry-after': '1' },
    );
  }
  return service;
}

function notScannable(folder: string, why: string | undefined): HttpError {
  return new HttpError(
    'SYNCD_ERR_FOLDER_ERROR',
    `folder ${folder} cannot be scanned: ${why ?? 'it is starting'}`,
  );
}

function failedSummary(folder: string, error: string) {
  return { folder, state: 'error', error, errors: 0, sequence: 0, version: 0 };
}

function query(request: FastifyRequest): Record<string, string | undefined> {
  const values = request.query as Record<string, string | string[] | undefined>;
  return Object.fromEntries(
    Object.entries(values).map(([key, value]) => [key, Array.isArray(value) ? value[0] : value]),
  );
}

function paging(request: FastifyRequest): { page: number; perpage: number } {
  const { page, perpage } = query(request);
  const number = (text: string | undefined, fallback: number, name: string) => {
    if (text === undefined || text === '') return fallback;
    const value = Number(text);
    if (!Number.isInteger(value) || value < 1)
      throw invalidQuery(`${name} must be a whole number of at least 1, not "${text}"`);
    return value;
  };
  return { page: number(page, 1, 'page'), perpage: number(perpage, 65536, 'perpage') };
}

// A sub path as Syncthing takes it: relative to the folder, without leading or trailing slashes.
function cleanSub(sub: string): string {
  const clean = sub.replace(/^\/+|\/+$/g, '');
  if (clean.split('/').some((part) => part === '..'))
    throw invalidQuery(`sub must stay inside the folder, not "${sub}"`);
  return clean;
}

const GO_ZERO_TIME = '0001-01-01T00:00:00Z';

// RFC 3339 with nanoseconds, as Go writes a time.
function modified(record: FileRecord): string {
  const seconds = new Date(record.modifiedS * 1000).toISOString().slice(0, 19);
  const fraction =
    record.modifiedNs === 0 ? '' : `.${String(record.modifiedNs).padStart(9, '0').replace(/0+$/, '')}`;
  return `${seconds}${fraction}Z`;
}

// What Syncthing shows for a record this device does not have: Go's zero FileInfo.
const NO_RECORD: FileRecord = {
  name: '',
  type: 'file',
  size: 0,
  permissions: 0,
  modifiedS: -62135596800,
  modifiedNs: 0,
  modifiedBy: 0n,
  deleted: false,
  invalid: false,
  noPermissions: true,
  version: [],
  sequence: 0,
  blockSize: 0,
  blocks: [],
  symlinkTarget: '',
};

/** A record as Syncthing's REST writes a FileInfo. */
export function restFile(record: FileRecord) {
  return {
    name: record.name,
    type: REST_TYPE_NAMES[record.type],
    size: record.type === 'file' ? record.size : record.deleted ? 0 : SYNTHETIC_SIZE,
    deleted: record.deleted,
    invalid: isInvalid(record),
    // An invalid local record is one this device ignores (Syncthing's FlagLocalIgnored, 2).
    ignored: record.invalid,
    mustRescan: false,
    noPermissions: record.noPermissions,
    modified: modified(record),
    modifiedBy: shortIdString(record.modifiedBy),
    sequence: record.sequence,
    version: versionStrings(record.version),
    // FlagLocalIgnored (2) and FlagLocalReceiveOnly (8).
    localFlags: (record.invalid ? 2 : 0) | (record.receiveOnlyChanged ? 8 : 0),
    numBlocks: record.blocks.length,
    ...(record.noPermissions ? {} : { permissions: `0${record.permissions.toString(8)}` }),
  };
}

interface TreeEntry {
  name: string;
  modTime: string;
  size: number;
  type: string;
  children?: TreeEntry[];
}

// GET /rest/db/browse: the tree below `prefix`, `levels` deep (-1: all), as Syncthing nests it.
function browse(db: IndexDb, folder: string, prefix: string, levels: number, dirsOnly: boolean): TreeEntry[] {
  const root: TreeEntry[] = [];
  const directories = new Map<string, TreeEntry[]>([['', root]]);
  const start = prefix === '' ? '' : `${prefix}/`;
  for (const record of db.iterate(folder)) {
    if (record.deleted || record.invalid || !record.name.startsWith(start)) continue;
    const name = record.name.slice(start.length);
    const depth = name.split('/').length - 1;
    if (levels > -1 && depth > levels) continue;
    const slash = name.lastIndexOf('/');
    const parent = directories.get(slash < 0 ? '' : name.slice(0, slash));
    if (!parent || (dirsOnly && record.type !== 'directory')) continue;
    const entry: TreeEntry = {
      name: slash < 0 ? name : name.slice(slash + 1),
      modTime: modified(record),
      size: record.type === 'file' ? record.size : SYNTHETIC_SIZE,
      type: REST_TYPE_NAMES[record.type],
    };
    if (record.type === 'directory') {
      entry.children = [];
      directories.set(name, entry.children);
    }
    parent.push(entry);
  }
  // Syncthing leaves out an empty list of children.
  for (const children of directories.values())
    for (const entry of children) if (entry.children?.length === 0) delete entry.children;
  return root;
}
