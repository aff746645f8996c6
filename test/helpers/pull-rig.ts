import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Test } from 'tap';
import { IndexDb } from '../../worker/index-db/index-db.ts';
import { HasherPool } from '../../worker/scanner/hasher-pool.ts';
import { BlockWriter } from '../../worker/sync/block-writer.ts';
import { EventLog } from '../../worker/events/event-log.ts';
import { Ignores } from '../../worker/scanner/ignores.ts';
import { scanFolder } from '../../worker/folders/scan-folder.ts';
import { pullFolder } from '../../worker/sync/pull-folder.ts';
import { recordingLogger } from './app.ts';
import { receivedBlock } from './received-block.ts';
import './teardown-first.ts';

/**
 * What a puller's test needs in `dir`: the index of a source device (source.sqlite), the index of the
 * device that pulls (target.sqlite), a hasher and a block writer; all closed when the test ends.
 */
export async function pullRig(t: Test, dir: string) {
  const sourceDb = await IndexDb.open(join(dir, 'source.sqlite'));
  const db = await IndexDb.open(join(dir, 'target.sqlite'));
  const hasher = new HasherPool(1);
  const writer = new BlockWriter();
  t.teardown(async () => {
    await hasher.close();
    await writer.close();
    sourceDb.close();
    db.close();
  });
  return { sourceDb, db, hasher, writer };
}

/** The device a pull pair's source folder is. */
export const PEER = 'PEER';

/**
 * Two folders, `source` (the device PEER, scanned by the real scanner and announced whole) and
 * `target` (this device), each from a tree of t.testdir, and a pull of target from source; `folder`
 * adds pull settings.
 */
export async function pullPair(t: Test, source: object, target: object, settings: object = {}) {
  const dir = t.testdir({ source: { '.stfolder': {}, ...source }, target: { '.stfolder': {}, ...target } });
  const paths = { source: join(dir, 'source'), target: join(dir, 'target') };
  const { sourceDb, db, hasher, writer } = await pullRig(t, dir);
  const folder = (path: string) => ({
    id: 'f',
    path,
    markerName: '.stfolder',
    ignorePerms: false,
    modTimeWindowS: 0,
  });
  // The peer scans its folder and announces all of it.
  const announce = async () => {
    await scanFolder({ folder: folder(paths.source), db: sourceDb, hasher, shortId: 7n });
    db.putRemote('f', PEER, [...sourceDb.iterate('f')], true);
  };
  const scanHere = () => scanFolder({ folder: folder(paths.target), db, hasher, shortId: 9n });
  // The folder's .stignore, which scans read and pulls are given.
  const ignore = (lines: string[]) => writeFile(join(paths.target, '.stignore'), lines.join('\n'));
  // A pull, logging to `logger` (by default, nowhere but its warnings).
  const pull = async (logger = recordingLogger().logger) => {
    return pullFolder({
      folder: { ...folder(paths.target), ignores: await Ignores.load(paths.target), ...settings },
      db,
      connected: () => new Set([PEER]),
      request: async (_device, block) => {
        const data = await readFile(join(paths.source, block.name));
        return receivedBlock(data.subarray(Number(block.offset), Number(block.offset) + block.size));
      },
      writer,
      recorded: () => {},
      events: new EventLog(),
      logger,
    });
  };
  return { paths, db, announce, scanHere, pull, ignore };
}
