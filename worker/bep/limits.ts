import { MessageType } from './bep_pb.ts';

/*
 * What a device may send in one message, checked on the wire bytes before anything is decoded into
 * objects: a peer is untrusted input, even a configured one. Syncthing itself sends far less: indexes
 * in batches of at most 1,000 files or 250 KiB (lib/db/util.go), blocks of at most 16 MiB. A message
 * over any bound closes the connection, with the bound named in the reason.
 */

/** A message's body on the wire, and decompressed: a 16 MiB block's Response and its framing. */
export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024 + 1024;
/** A decompressed body over this many bytes must not be more than RATIO times its compressed size. */
export const RATIO_CHECKED_FROM = 1024 * 1024;
export const MAX_RATIO = 64;
/** Files in one Index or IndexUpdate. */
export const MAX_FILES = 10_000;
/** Repeated entries of any kind in one message: files, blocks, version counters, folders, devices... */
export const MAX_ENTRIES = 200_000;
/** A file's name or a symlink's target, in bytes (Linux's PATH_MAX). */
export const MAX_NAME_BYTES = 4096;
/** IDs, labels, device names, addresses, reasons: any other string, in bytes. */
export const MAX_STRING_BYTES = 1024;
/** Folders in a ClusterConfig, devices of a folder there, addresses of a device. */
export const MAX_FOLDERS = 10_000;
export const MAX_DEVICES = 10_000;
export const MAX_ADDRESSES = 100;
/** Counters of one version vector. */
export const MAX_COUNTERS = 10_000;

type Rule = { name: string; bytes: number } | { name: string; count: number; shape?: Shape };
type Shape = Record<number, Rule>;

const string = (name: string, bytes = MAX_STRING_BYTES): Rule => ({ name, bytes });
const hash: Rule = { name: 'hash', bytes: 64 };

const VECTOR: Shape = { 1: { name: 'version counters', count: MAX_COUNTERS } };
const FILE_INFO: Shape = {
  1: string('file name', MAX_NAME_BYTES),
  9: { name: 'versions', count: 1, shape: VECTOR },
  // A block's own fields are small numbers and a hash, bounded with the message.
  16: { name: 'blocks', count: MAX_ENTRIES },
  17: string('symlink target', MAX_NAME_BYTES),
  18: hash,
  19: string('encrypted file info', 64 * 1024),
};
const INDEX: Shape = {
  1: string('folder ID'),
  2: { name: 'files', count: MAX_FILES, shape: FILE_INFO },
};
const DEVICE: Shape = {
  1: string('device ID', 32),
  2: string('device name'),
  3: { name: 'addresses', count: MAX_ADDRESSES },
  5: string('certificate name'),
  10: string('encryption password token'),
};
const FOLDER: Shape = {
  1: string('folder ID'),
  2: string('folder label'),
  16: { name: 'devices', count: MAX_DEVICES, shape: DEVICE },
};
const SHAPES = new Map<number, Shape>([
  [MessageType.CLUSTER_CONFIG, { 1: { name: 'folders', count: MAX_FOLDERS, shape: FOLDER } }],
  [MessageType.INDEX, INDEX],
  [MessageType.INDEX_UPDATE, INDEX],
  [MessageType.REQUEST, { 2: string('folder ID'), 3: string('file name', MAX_NAME_BYTES), 6: hash }],
  [
    MessageType.DOWNLOAD_PROGRESS,
    {
      1: string('folder ID'),
      2: {
        name: 'download progress updates',
        count: MAX_FILES,
        shape: { 2: string('file name', MAX_NAME_BYTES), 3: { name: 'versions', count: 1, shape: VECTOR } },
      },
    },
  ],
  [MessageType.CLOSE, { 1: string('close reason') }],
]);

// Every repeated field of bep.proto has a rule above but DownloadProgress's block indexes: those
// bodies are not decoded at all (messages.ts).

/**
 * What in a message's body breaks a bound (a count, a length, the number of entries), or undefined:
 * read from the protobuf wire bytes, without making an object of them. Bytes that are not protobuf at
 * all are left to the decoder to refuse. The Response's data is bounded by the message's own size.
 */
export function overLimit(type: number, body: Uint8Array): string | undefined {
  const shape = SHAPES.get(type);
  if (!shape) return undefined;
  const budget = { entries: MAX_ENTRIES };
  return check(body, 0, body.length, shape, budget);
}

function check(
  bytes: Uint8Array,
  start: number,
  end: number,
  shape: Shape,
  budget: { entries: number },
): string | undefined {
  const counts: Record<number, number> = {};
  let at = start;
  while (at < end) {
    const tag = varint(bytes, at, end);
    if (tag === undefined) return undefined;
    at = tag.next;
    const field = Math.floor(tag.value / 8);
    switch (tag.value % 8) {
      case 0: {
        const skipped = varint(bytes, at, end);
        if (skipped === undefined) return undefined;
        at = skipped.next;
        break;
      }
      case 1:
        at += 8;
        break;
      case 5:
        at += 4;
        break;
      case 2: {
        const length = varint(bytes, at, end);
        if (length === undefined || length.next + length.value > end) return undefined;
        at = length.next;
        const rule = shape[field];
        if (rule && 'bytes' in rule) {
          if (length.value > rule.bytes)
            return `a ${rule.name} of ${length.value} bytes, over the limit of ${rule.bytes}`;
        } else if (rule) {
          const count = (counts[field] = (counts[field] ?? 0) + 1);
          if (count > rule.count) return `more than ${rule.count} ${rule.name}`;
          if (--budget.entries < 0)
            return `more than ${MAX_ENTRIES} entries (files, blocks, counters, folders, devices) in one message`;
          if (rule.shape) {
            const problem = check(bytes, at, at + length.value, rule.shape, budget);
            if (problem) return problem;
          }
        }
        at += length.value;
        break;
      }
      default:
        // Groups (3, 4) and unknown wire types: the decoder refuses them.
        return undefined;
    }
  }
  return undefined;
}

// A varint's value (up to 2^53, exact enough for a tag or a length) and the index after it.
function varint(bytes: Uint8Array, at: number, end: number): { value: number; next: number } | undefined {
  let value = 0;
  let scale = 1;
  for (let i = 0; i < 10 && at < end; i++) {
    const byte = bytes[at++] as number;
    value += (byte & 0x7f) * scale;
    if (byte < 0x80) return { value, next: at };
    scale *= 128;
  }
  return undefined;
}
