import { shortIdString } from '../../shared/device-id.ts';
import type { Block } from './blocks.ts';

/** Syncthing counts a directory or a symlink as this many bytes (protocol.SyntheticDirectorySize). */
export const SYNTHETIC_SIZE = 128;

/** BEP's FileInfoType numbers, and the names Syncthing's REST answers spell. */
export const FILE_TYPES = { file: 0, directory: 1, symlink: 4 } as const;
export type FileType = keyof typeof FILE_TYPES;
export const REST_TYPE_NAMES: Record<FileType, string> = {
  file: 'FILE_INFO_TYPE_FILE',
  directory: 'FILE_INFO_TYPE_DIRECTORY',
  symlink: 'FILE_INFO_TYPE_SYMLINK',
};

/** One counter of a version vector: a device's short ID and its value (both 64-bit). */
export interface Counter {
  id: bigint;
  value: bigint;
}

/** A file, directory or symlink as the index keeps it: BEP's FileInfo, in our names. */
export interface FileRecord {
  /** Relative to the folder, with `/` between parts. */
  name: string;
  type: FileType;
  size: number;
  /** The mode's permission bits (0o777 and the like). */
  permissions: number;
  modifiedS: number;
  modifiedNs: number;
  /** Short ID of the device that made this version. */
  modifiedBy: bigint;
  deleted: boolean;
  invalid: boolean;
  noPermissions: boolean;
  version: Counter[];
  /** The folder's local sequence number of this version: increases with every change. */
  sequence: number;
  blockSize: number;
  blocks: Block[];
  symlinkTarget: string;
  /**
   * A change made here on a receive-only folder (Syncthing's FlagLocalReceiveOnly): kept, but never
   * a version other devices take; offered as invalid, without a version, and undone by a revert.
   */
  receiveOnlyChanged?: boolean;
}

/** A record as written: the index gives it its sequence. */
export function withoutSequence(record: FileRecord): Omit<FileRecord, 'sequence'> {
  const { sequence: _sequence, ...rest } = record;
  return rest;
}

/**
 * Whether a record takes no part in the global version while a valid one exists: one a device marks
 * invalid (ignored there), or a change kept on a receive-only folder (Syncthing's IsInvalid).
 */
export function isInvalid(record: Pick<FileRecord, 'invalid' | 'receiveOnlyChanged'>): boolean {
  return record.invalid || record.receiveOnlyChanged === true;
}

/**
 * The vector after a change by `device`: its counter becomes the larger of its old value plus one and
 * the current Unix time in seconds, as Syncthing's rule says (lib/protocol/vector.go updateWithNow);
 * counters stay sorted by ID. The counter is a uint64, and at the top of its range it wraps as Go's
 * does, to the time: the change is made and sent, as Syncthing makes it.
 */
export function bumpVersion(
  version: Counter[],
  device: bigint,
  nowSeconds = BigInt(Math.floor(Date.now() / 1000)),
): Counter[] {
  const next = version.map((counter) => ({ ...counter }));
  const own = next.find((counter) => counter.id === device);
  if (own) {
    const next64 = BigInt.asUintN(64, own.value + 1n);
    own.value = next64 > nowSeconds ? next64 : nowSeconds;
    return next;
  }
  next.push({ id: device, value: nowSeconds > 1n ? nowSeconds : 1n });
  return next.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** Syncthing's REST form of a vector: `["SHORTID:value", …]` with the short ID as its 7-character string. */
export function versionStrings(version: Counter[]): string[] {
  return version.map((counter) => `${shortIdString(counter.id)}:${counter.value}`);
}

/** A record's modification time as Go writes a time.Time in JSON: RFC 3339 with nanoseconds. */
export function modifiedTime(record: Pick<FileRecord, 'modifiedS' | 'modifiedNs'>): string {
  const seconds = new Date(record.modifiedS * 1000).toISOString().slice(0, 19);
  const fraction =
    record.modifiedNs === 0 ? '' : `.${String(record.modifiedNs).padStart(9, '0').replace(/0+$/, '')}`;
  return `${seconds}${fraction}Z`;
}
