import { create } from '@bufbuild/protobuf';
import { FILE_TYPES, type FileRecord, type FileType, isInvalid } from '../records/file-record.ts';
import { MAX_BLOCK_SIZE, MIN_BLOCK_SIZE } from '../records/blocks.ts';
import { type FileInfo, FileInfoSchema, FileInfoType } from './bep_pb.ts';
import { nameProblem } from '../records/names.ts';

/**
 * A record as BEP's FileInfo, to send in an Index or IndexUpdate. What Syncthing 2.x checks of every
 * FileInfo received (lib/protocol/protocol.go checkFileInfoConsistency, which drops the connection
 * otherwise) holds of it whatever the record: blocks only for a file that is not deleted, size 0 for a
 * directory or a symlink (as 1.19's scanner sends them, however another device sent them here).
 */
export function toFileInfo(record: FileRecord): FileInfo {
  const live = record.type === 'file' && !record.deleted;
  return create(FileInfoSchema, {
    name: record.name,
    type: FILE_TYPES[record.type],
    size: BigInt(record.type === 'file' ? record.size : 0),
    permissions: record.permissions,
    modifiedS: BigInt(record.modifiedS),
    modifiedNs: record.modifiedNs,
    modifiedBy: record.modifiedBy,
    deleted: record.deleted,
    invalid: isInvalid(record),
    noPermissions: record.noPermissions,
    // A change kept on a receive-only folder must never become another device's global version, so it
    // goes without one (as Syncthing's prepareFileInfoForIndex sends it).
    version: {
      counters: record.receiveOnlyChanged ? [] : record.version.map(({ id, value }) => ({ id, value })),
    },
    sequence: BigInt(record.sequence),
    blockSize: record.blockSize,
    blocks: live
      ? record.blocks.map((block) => ({
          offset: BigInt(block.offset),
          size: block.size,
          hash: block.hash,
          weakHash: block.weakHash,
        }))
      : [],
    symlinkTarget: Buffer.from(record.symlinkTarget),
  });
}

const TYPES = new Map<number, FileType>([
  [FileInfoType.FILE, 'file'],
  [FileInfoType.DIRECTORY, 'directory'],
  [FileInfoType.SYMLINK, 'symlink'],
  // Syncthing's deprecated symlink types read as symlinks.
  [FileInfoType.SYMLINK_FILE, 'symlink'],
  [FileInfoType.SYMLINK_DIRECTORY, 'symlink'],
]);

/**
 * A FileInfo a device sent, as a record, or the reason it breaks Syncthing's rules (which closes the
 * connection, as Syncthing closes it): a name that is not canonical, a deleted file or a directory
 * with blocks, a file without, a block size that is no power of two between 128 KiB and 16 MiB, or
 * numbers out of range. A symlink whose target is not UTF-8 (Syncthing 2.x sends a target's bytes as
 * they are) is kept as invalid, without its target: its version is known, and nothing is made of it.
 */
export function fromFileInfo(info: FileInfo): FileRecord | string {
  const problem = nameProblem(info.name);
  if (problem) return `file name ${JSON.stringify(info.name)}: ${problem}`;
  const type = TYPES.get(info.type);
  if (type === undefined) return `${info.name}: unknown file type ${info.type}`;
  if (info.deleted && info.blocks.length > 0) return `${info.name}: deleted file with non-empty block list`;
  if (type === 'directory' && info.blocks.length > 0)
    return `${info.name}: directory with non-empty block list`;
  if (type === 'file' && !info.deleted && !info.invalid && info.blocks.length === 0) {
    return `${info.name}: file with empty block list`;
  }
  const blockSize = info.blockSize === 0 ? MIN_BLOCK_SIZE : info.blockSize;
  if (blockSize < MIN_BLOCK_SIZE || blockSize > MAX_BLOCK_SIZE || (blockSize & (blockSize - 1)) !== 0) {
    return `${info.name}: block size ${info.blockSize} is not a power of two from 128 KiB to 16 MiB`;
  }
  const size = safe(info.size);
  const modifiedS = safe(info.modifiedS);
  const sequence = safe(info.sequence);
  if (size === undefined || size < 0) return `${info.name}: size ${info.size} out of range`;
  if (modifiedS === undefined || sequence === undefined || sequence < 0) {
    return `${info.name}: modification time or sequence out of range`;
  }
  let offset = 0;
  const blocks = [];
  for (const block of info.blocks) {
    if (block.hash.length !== 32) return `${info.name}: a block hash of ${block.hash.length} bytes`;
    if (block.size < 0 || block.size > MAX_BLOCK_SIZE || safe(block.offset) !== offset) {
      return `${info.name}: blocks that do not follow each other`;
    }
    blocks.push({ offset, size: block.size, hash: Buffer.from(block.hash), weakHash: block.weakHash });
    offset += block.size;
  }
  if (type === 'file' && !info.deleted && !info.invalid && offset !== size) {
    return `${info.name}: blocks of ${offset} bytes for a file of ${size}`;
  }
  const target = utf8(info.symlinkTarget);
  return {
    name: info.name,
    type,
    size,
    permissions: info.permissions & 0o7777,
    modifiedS,
    modifiedNs: info.modifiedNs,
    modifiedBy: info.modifiedBy,
    deleted: info.deleted,
    invalid: info.invalid || (type === 'symlink' && target === undefined),
    noPermissions: info.noPermissions,
    version: (info.version?.counters ?? []).map(({ id, value }) => ({ id, value })),
    sequence,
    blockSize,
    blocks,
    symlinkTarget: target ?? '',
  };
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function utf8(bytes: Uint8Array): string | undefined {
  if (bytes.length === 0) return '';
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return undefined;
  }
}

function safe(value: bigint): number | undefined {
  return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER)
    ? Number(value)
    : undefined;
}
