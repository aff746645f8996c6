// Syncthing 2.x as the tests play it, no 2.x binary being installed here: its Hello, its messages'
// fields that 1.19 did not have, written as protobuf wire bytes, and the rules it checks every
// FileInfo it receives by (ported from its lib/protocol, HEAD of the mirror, v2.1.3 and after).
import { posix } from 'node:path';
import type { FileInfo } from '../../worker/bep/bep_pb.ts';
import { FileInfoType } from '../../worker/bep/bep_pb.ts';
import { encodeHello } from '../../worker/bep/frames.ts';

export const V2_VERSION = 'v2.1.3';

/**
 * The Hello 2.x sends (connections/service.go helloForDevice): its client, the connections it wants
 * to the device (3, its default) and the time in nanoseconds.
 */
export function helloV2(deviceName = 'st2x'): Buffer {
  return encodeHello({
    deviceName,
    clientName: 'syncthing',
    clientVersion: V2_VERSION,
    numConnections: 3,
    timestamp: BigInt(Date.now()) * 1_000_000n,
  });
}

/**
 * Why 2.x would refuse `info`, and with it the whole Index and the connection
 * (lib/protocol/protocol.go checkFileInfoConsistency, checkFilename), or undefined.
 */
export function consistencyProblem(info: FileInfo): string | undefined {
  const name = info.name;
  if (goPathClean(name) !== name) return `${name}: unclean filename`;
  if (name === '' || name === '.' || name === '..' || name.startsWith('/') || name.startsWith('../'))
    return `${name}: invalid filename`;
  const symlink = [FileInfoType.SYMLINK, FileInfoType.SYMLINK_FILE, FileInfoType.SYMLINK_DIRECTORY].includes(
    info.type,
  );
  const blocks = info.blocks.length;
  if (info.deleted && blocks !== 0) return `${name}: deleted file with blocks`;
  if (info.type !== FileInfoType.FILE && blocks !== 0) return `${name}: non-file with blocks`;
  // 128: its deprecatedSyntheticDirectorySize.
  if (info.type === FileInfoType.DIRECTORY && info.size !== 0n && info.size !== 128n)
    return `${name}: directory of size ${info.size}`;
  if (symlink && info.size !== 0n) return `${name}: symlink of size ${info.size}`;
  if (!info.deleted && !info.invalid && info.type === FileInfoType.FILE && blocks === 0)
    return `${name}: file without blocks`;
  return undefined;
}

// Go's path.Clean: Node's normalize, but without a trailing slash, and "." for nothing.
function goPathClean(name: string): string {
  const normal = posix.normalize(name);
  return normal.length > 1 && normal.endsWith('/') ? normal.slice(0, -1) : normal;
}

/** Protobuf's wire format by hand: the fields 2.x sends that syncd's schema does not describe. */
export const wire = {
  varint(field: number, value: number | bigint): Buffer {
    return Buffer.concat([varint(field << 3), varint(value)]);
  },
  bytes(field: number, ...parts: Uint8Array[]): Buffer {
    const body = Buffer.concat(parts);
    return Buffer.concat([varint((field << 3) | 2), varint(body.length), body]);
  },
  string(field: number, text: string): Buffer {
    return wire.bytes(field, Buffer.from(text));
  },
};

function varint(value: number | bigint): Buffer {
  let rest = BigInt.asUintN(64, BigInt(value));
  const out: number[] = [];
  while (rest >= 0x80n) {
    out.push(Number(rest & 0x7fn) | 0x80);
    rest >>= 7n;
  }
  out.push(Number(rest));
  return Buffer.from(out);
}

/** The varint fields of a message's bytes, by field number (the last of each), as a decoder sees them. */
export function varintFields(bytes: Uint8Array): Map<number, bigint> {
  const fields = new Map<number, bigint>();
  let at = 0;
  const read = () => {
    let value = 0n;
    for (let shift = 0n; ; shift += 7n) {
      const byte = bytes[at++] as number;
      value |= BigInt(byte & 0x7f) << shift;
      if (byte < 0x80) return value;
    }
  };
  while (at < bytes.length) {
    const tag = Number(read());
    const value = tag % 8 === 0 || tag % 8 === 2 ? read() : undefined;
    if (value === undefined) throw new Error(`wire type ${tag % 8} is not expected here`);
    if (tag % 8 === 0) fields.set(tag >> 3, value);
    else at += Number(value);
  }
  return fields;
}

/**
 * 2.x's platform data of a file (FileInfo field 14): its Unix owner and a Linux extended attribute,
 * which syncd leaves unread.
 */
export function platformData(): Buffer {
  const unix = wire.bytes(
    1,
    wire.string(1, 'alice'),
    wire.string(2, 'staff'),
    wire.varint(3, 1000),
    wire.varint(4, 1000),
  );
  const xattr = wire.bytes(1, wire.string(1, 'user.origin'), wire.bytes(2, Buffer.from([0, 0xff, 1])));
  return wire.bytes(14, unix, wire.bytes(3, xattr));
}

/** An Index (or with `prev`, an IndexUpdate) body as 2.x writes it: its batch's last sequence too. */
export function indexV2(folder: string, files: Uint8Array[], last: bigint, prev?: bigint): Buffer {
  return Buffer.concat([
    wire.string(1, folder),
    ...files.map((file) => wire.bytes(2, file)),
    wire.varint(3, last),
    ...(prev === undefined ? [] : [wire.varint(4, prev)]),
  ]);
}
