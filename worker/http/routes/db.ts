import type { FastifyInstance, FastifyPluginOptions, FastifyReply, FastifyRequest } from 'fastify';
import type { WorkerConfig } from '../../config/worker-config.ts';
import { shortIdString } from '../../../shared/device-id.ts';
import {
  type FileRecord,
  isInvalid,
  modifiedTime,
  REST_TYPE_NAMES,
  SYNTHETIC_SIZE,
  versionStrings,
} from '../../records/file-record.ts';
import type { SyncModel } from '../../service/model.ts';
import { invalidQuery, noSuch } from '../http-errors.ts';
import { checkedDeviceId } from './config.ts';
import { heldModel } from './held-model.ts';
import { whenDebugging } from '../when-debugging.ts';

export interface DbRouteOptions extends FastifyPluginOptions {
  config: WorkerConfig;
  /** The model, while this worker holds the service. */
  model: () => SyncModel | undefined;
}

/**
 * Syncthing's /rest/db endpoints and GET /rest/folder/errors, in its shapes, answered by the model of
 * the worker that holds the service (503 for the moment it changes hands). Registered without a
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
    return { id, model: heldModel(options) };
  };

  app.get('/rest/db/status', async (request) => {
    const { id, model } = folderOf(request);
    return model.folderStatus(id);
  });

  const fileOf = (request: FastifyRequest) => {
    const { id, model } = folderOf(request);
    const name = query(request).file ?? '';
    const found = model.file(id, name);
    if (!found) throw noSuch(`no such object in the index: ${JSON.stringify(name)} in folder ${id}`);
    return {
      // The devices that have the global version, besides this one.
      availability: found.holders.map((device) => ({ id: device, fromTemporary: false })),
      global: restFile(found.global),
      // A name only other devices have is answered with an empty local record, as Syncthing does.
      local: restFile(found.local ?? NO_RECORD),
    };
  };
  app.get('/rest/db/file', async (request) => ({
    ...fileOf(request),
    // Syncthing maps modification times only on file systems that cannot keep them: none here.
    mtime: { err: null, value: { real: GO_ZERO_TIME, virtual: GO_ZERO_TIME } },
  }));
  // Syncthing's debugging views of the same (gui.debugging): what `syncthing cli debug file` shows.
  const debugging = { onRequest: whenDebugging(config) };
  app.get('/rest/debug/file', debugging, async (request) => fileOf(request));
  // Each device of each folder, this one included, with its completion averaged over its folders
  // in whole percents, as Syncthing 1.19's getPeerCompletion makes it: a folder whose device is not
  // connected sets its sum back to 0.
  app.get('/rest/debug/peerCompletion', debugging, async () => {
    const model = heldModel(options);
    const connected = model.connections();
    const total = new Map<string, { sum: number; count: number }>();
    for (const folder of config.current.folders) {
      for (const { deviceID } of folder.devices) {
        const entry = total.get(deviceID) ?? { sum: 0, count: 0 };
        entry.sum = connected.has(deviceID)
          ? entry.sum + model.completion([folder.id], deviceID).completion
          : 0;
        entry.count += 1;
        total.set(deviceID, entry);
      }
    }
    return Object.fromEntries(
      [...total].map(([device, { sum, count }]) => [device, Math.trunc(sum / count)]),
    );
  });

  app.post('/rest/db/scan', async (request, reply: FastifyReply) => {
    const { folder, sub } = request.query as { folder?: string; sub?: string | string[] };
    if (folder === undefined || folder === '') {
      await heldModel(options).scan(undefined, () => []);
      return reply.code(200).send();
    }
    const { id, model } = folderOf(request);
    const subs = Array.isArray(sub) ? sub : sub === undefined ? [] : [sub];
    // The sub paths are checked once the folder is known to be scannable, as they were before.
    await model.scan(id, () => subs.map(cleanSub));
    return reply.code(200).send();
  });

  app.get('/rest/db/browse', async (request) => {
    const { id, model } = folderOf(request);
    const { prefix = '', levels, dirsonly } = query(request);
    const depth = levels === undefined || levels === '' ? -1 : Number.parseInt(levels, 10);
    if (Number.isNaN(depth)) throw invalidQuery(`levels must be a whole number, not "${levels}"`);
    return model.browse(id, prefix.replace(/\/+$/, ''), depth, dirsonly !== undefined && dirsonly !== '');
  });

  // What this device needs of the global versions, in Syncthing's pages: the files being pulled in
  // `progress`, the rest after them (nothing is queued apart).
  const need = (request: FastifyRequest, id: string, model: SyncModel) => {
    const { page, perpage } = paging(request);
    const pulling = model.pulling(id);
    const files = model.need(id, { page, perpage });
    const progress = files.filter((file) => pulling.has(file.name)).map(restFile);
    const rest = files.filter((file) => !pulling.has(file.name)).map(restFile);
    return { progress, queued: [], rest, page, perpage };
  };
  app.get('/rest/db/need', async (request) => {
    const { id, model } = folderOf(request);
    return need(request, id, model);
  });
  // A file pulled before the others, then the need as above (Syncthing's postDBPrio).
  app.post('/rest/db/prio', async (request) => {
    const { id, model } = folderOf(request);
    const { file } = query(request);
    if (file === undefined || file === '') throw invalidQuery('give ?file=NAME, the file to pull first');
    model.bringToFront(id, file);
    return need(request, id, model);
  });

  // What a device lacks of the global versions (Syncthing's remote need), in pages.
  app.get('/rest/db/remoteneed', async (request) => {
    const { id, model } = folderOf(request);
    const { device } = query(request);
    if (device === undefined || device === '') throw invalidQuery('give ?device=ID, the device asked about');
    const of = checkedDeviceId(device);
    if (!config.current.folders.find((f) => f.id === id)?.devices.some((d) => d.deviceID === of)) {
      throw noSuch(`folder ${id} is not shared with device ${of}`);
    }
    const { page, perpage } = paging(request);
    const files = model.need(id, { page, perpage }, of).map(restFile);
    return { files, page, perpage };
  });

  // The changes kept on a receive-only folder (what a revert gives up), in pages.
  app.get('/rest/db/localchanged', async (request) => {
    const { id, model } = folderOf(request);
    const { page, perpage } = paging(request);
    return { files: model.localChanged(id, { page, perpage }).map(restFile), page, perpage };
  });

  // Syncthing's override (send-only) and revert (receive-only): answered once done, as the folder
  // takes turns between scans, pulls and these; 409 for a folder of another type.
  app.post('/rest/db/override', async (request, reply: FastifyReply) => {
    const { id, model } = folderOf(request);
    await model.override(id);
    return reply.code(200).send();
  });
  app.post('/rest/db/revert', async (request, reply: FastifyReply) => {
    const { id, model } = folderOf(request);
    await model.revert(id);
    return reply.code(200).send();
  });

  app.get('/rest/db/completion', async (request) => {
    const { folder, device } = query(request);
    if (device !== undefined && device !== '') checkedDeviceId(device);
    const ids =
      folder === undefined || folder === ''
        ? config.current.folders.map((f) => f.id)
        : [folderOf(request).id];
    // The device asked about (this one when none is named): what it lacks of each folder's global versions.
    const of =
      device === undefined || device === '' || device === config.myId ? undefined : checkedDeviceId(device);
    return heldModel(options).completion(ids, of);
  });

  // The folder's .stignore: its lines as written, and the patterns they expand to.
  app.get('/rest/db/ignores', async (request) => {
    const { id, model } = folderOf(request);
    return model.ignores(id);
  });
  app.post('/rest/db/ignores', async (request) => {
    const { id, model } = folderOf(request);
    // The body is read once the folder is known to run.
    return model.setIgnores(id, () => ignoreLines(request.body));
  });

  app.get('/rest/folder/errors', async (request) => {
    const { id, model } = folderOf(request);
    const { page, perpage } = paging(request);
    return { folder: id, errors: model.folderErrors(id, { page, perpage }), page, perpage };
  });

  // syncd's own, for its web GUI (Syncthing has neither). What ignore lines would leave out of a folder
  // before they are saved: the body of POST /rest/db/ignores, read as there.
  app.post('/rest/syncd/ignores/preview', async (request) => {
    const { id, model } = folderOf(request);
    return model.ignoresPreview(id, () => ignoreLines(request.body));
  });
  // A folder's conflict copies by the file each is a copy of, from the index. Syncthing's GUI would
  // read the whole tree (/rest/db/browse?levels=-1): for a large folder, seconds of the worker and
  // megabytes of JSON for a few names; here the index is sifted for the marker, and the answer stops at
  // MAX_CONFLICT_COPIES copies (`truncated` then).
  app.get('/rest/syncd/conflicts', async (request) => {
    const { id, model } = folderOf(request);
    return model.conflicts(id, MAX_CONFLICT_COPIES);
  });
}

/** Conflict copies listed in one answer, at most: a folder may hold any number of them. */
export const MAX_CONFLICT_COPIES = 1000;

/** The body of POST /rest/db/ignores (and of syncd's preview of it): {"ignore": [lines of .stignore]}. */
function ignoreLines(body: unknown): string[] {
  let value: unknown;
  try {
    value = JSON.parse(String(body ?? ''));
  } catch (error) {
    throw invalidQuery(`the body must be JSON such as {"ignore": ["*.tmp"]}: ${(error as Error).message}`);
  }
  const lines = (value as { ignore?: unknown } | null)?.ignore;
  if (!Array.isArray(lines) || !lines.every((line) => typeof line === 'string')) {
    throw invalidQuery('the body must be {"ignore": [lines of .stignore]}');
  }
  return lines as string[];
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
    modified: modifiedTime(record),
    modifiedBy: shortIdString(record.modifiedBy),
    sequence: record.sequence,
    version: versionStrings(record.version),
    // FlagLocalIgnored (2) and FlagLocalReceiveOnly (8).
    localFlags: (record.invalid ? 2 : 0) | (record.receiveOnlyChanged ? 8 : 0),
    numBlocks: record.blocks.length,
    ...(record.noPermissions ? {} : { permissions: `0${record.permissions.toString(8)}` }),
  };
}
