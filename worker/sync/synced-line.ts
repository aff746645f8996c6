import type { Logger } from '../../shared/logger.ts';
import type { FileRecord } from '../records/file-record.ts';

/**
 * Logs one line at info for an item a pull finished, as Syncthing 2.x does (lib/model/folder_sendrecv.go:
 * "Synced file", "Deleted directory"; 1.19 wrote such lines at debug only). Its fields are those of
 * the ItemFinished event, and the size of a file written; its message names the item, for the log
 * kept behind /rest/system/log, which keeps messages only.
 */
export function logSynced(
  logger: Logger,
  folder: { id: string; described: string },
  name: string,
  record: Pick<FileRecord, 'type' | 'deleted' | 'size'>,
): void {
  const type = record.type === 'directory' ? 'dir' : record.type;
  const action = record.deleted ? 'delete' : 'update';
  const size = record.type === 'file' && !record.deleted ? { size: record.size } : {};
  logger.info(
    { folder: folder.id, item: name, type, action, ...size },
    `${record.deleted ? DELETED[record.type] : UPDATED[record.type]} ${name} in folder ${folder.described}`,
  );
}

// Syncthing 2.x's words for each (folder_sendrecv.go).
const UPDATED: Record<FileRecord['type'], string> = {
  file: 'Synced file',
  directory: 'Created or updated directory',
  symlink: 'Created or updated symlink',
};
const DELETED: Record<FileRecord['type'], string> = {
  file: 'Deleted file',
  directory: 'Deleted directory',
  symlink: 'Deleted symlink',
};
