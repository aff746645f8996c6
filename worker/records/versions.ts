import { type Counter, type FileRecord, isInvalid } from './file-record.ts';

/**
 * How version vector `a` stands to `b`, as Syncthing orders them (lib/protocol/vector.go): one
 * dominates the other (`greater`, `lesser`), they are the same (`equal`), or neither dominates, a
 * conflict, with a direction that both sides compute alike (`concurrent-greater`, `concurrent-lesser`)
 * so that every device settles it the same way. A missing counter counts as zero.
 */
export type Ordering = 'equal' | 'greater' | 'lesser' | 'concurrent-greater' | 'concurrent-lesser';

export function compareVersions(a: readonly Counter[], b: readonly Counter[]): Ordering {
  let result: 'equal' | 'greater' | 'lesser' = 'equal';
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    const x = a[i];
    const y = b[j];
    let aAhead = false;
    let bAhead = false;
    if (x && y && x.id === y.id) {
      aAhead = x.value > y.value;
      bAhead = x.value < y.value;
      i++;
      j++;
    } else if (x && (!y || x.id < y.id)) {
      aAhead = x.value > 0n;
      i++;
    } else if (y) {
      bAhead = y.value > 0n;
      j++;
    }
    if (aAhead) {
      if (result === 'lesser') return 'concurrent-lesser';
      result = 'greater';
    } else if (bAhead) {
      if (result === 'greater') return 'concurrent-greater';
      result = 'lesser';
    }
  }
  return result;
}

/**
 * Whether `a` wins a conflict with `b` (their versions concurrent), by Syncthing's rule
 * (lib/protocol/bep_extensions.go WinsConflict): a valid version beats an invalid one, a change beats a
 * deletion, the newer modification time wins, and on a tie the version that compares as
 * concurrent-greater.
 */
export function winsConflict(a: FileRecord, b: FileRecord): boolean {
  if (isInvalid(a) !== isInvalid(b)) return isInvalid(b);
  if (a.deleted !== b.deleted) return b.deleted;
  if (a.modifiedS !== b.modifiedS) return a.modifiedS > b.modifiedS;
  if (a.modifiedNs !== b.modifiedNs) return a.modifiedNs > b.modifiedNs;
  return compareVersions(a.version, b.version) === 'concurrent-greater';
}

/** Whether `a` is a newer version than `b`: it dominates it, or wins their conflict. */
export function newer(a: FileRecord, b: FileRecord): boolean {
  const ordering = compareVersions(a.version, b.version);
  if (ordering === 'greater') return true;
  if (ordering === 'lesser' || ordering === 'equal') return false;
  return winsConflict(a, b);
}

/**
 * The global version among the devices' records of one name: the newest valid one (an invalid
 * record is only global when every record is invalid), and the devices that have it.
 */
export function globalVersion<T extends { device: string; record: FileRecord }>(
  entries: readonly T[],
): { global: T; holders: string[] } | undefined {
  const valid = entries.filter((entry) => !isInvalid(entry.record));
  const candidates = valid.length > 0 ? valid : entries;
  let global: T | undefined;
  for (const entry of candidates) if (!global || newer(entry.record, global.record)) global = entry;
  if (!global) return undefined;
  const winner = global;
  const holders = candidates
    .filter((entry) => compareVersions(entry.record.version, winner.record.version) === 'equal')
    .map((entry) => entry.device);
  return { global: winner, holders };
}

/** Same type, size, blocks and (unless ignored) permissions: nothing on disk needs to change. */
export function equivalent(a: FileRecord, b: FileRecord, ignorePerms: boolean): boolean {
  if (a.type !== b.type || a.deleted !== b.deleted || a.size !== b.size) return false;
  if (
    !ignorePerms &&
    !a.noPermissions &&
    !b.noPermissions &&
    (a.permissions & 0o777) !== (b.permissions & 0o777)
  ) {
    return false;
  }
  if (a.type === 'symlink') return a.symlinkTarget === b.symlinkTarget;
  if (a.type === 'directory') return true;
  return (
    a.blocks.length === b.blocks.length &&
    a.blocks.every((block, i) => block.hash.equals(b.blocks[i]?.hash ?? Buffer.alloc(0)))
  );
}

/**
 * Whether two modification times are the same within the folder's modTimeWindowS. Times set by syncd
 * itself (a pulled file) land within a microsecond or two of the version's: Node sets them from a
 * double, not in nanoseconds, and the kernel keeps what it is given to the microsecond (so a time just
 * below a microsecond's end can land a whole microsecond before it).
 */
export function sameTime(
  a: Pick<FileRecord, 'modifiedS' | 'modifiedNs'>,
  b: Pick<FileRecord, 'modifiedS' | 'modifiedNs'>,
  modTimeWindowS: number,
): boolean {
  const window = Math.max(modTimeWindowS * 1e9, 2000);
  return Math.abs((a.modifiedS - b.modifiedS) * 1e9 + (a.modifiedNs - b.modifiedNs)) < window;
}

/** Equivalent, and for a file there, of the same time too: Syncthing's IsEquivalentOptional. */
export function equivalentAt(
  a: Omit<FileRecord, 'sequence'>,
  b: FileRecord,
  folder: { ignorePerms: boolean; modTimeWindowS: number },
): boolean {
  if (!equivalent({ ...a, sequence: 0 }, b, folder.ignorePerms)) return false;
  return a.deleted || a.type !== 'file' || sameTime(a, b, folder.modTimeWindowS);
}
