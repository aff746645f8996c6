import { create } from '@bufbuild/protobuf';
import { ResponseSchema } from '../../worker/bep/bep_pb.ts';
import { encodeHello, encodeMessage, FrameReader } from '../../worker/bep/frames.ts';

/**
 * `data` as a connection receives a block: read out of a Response's frame by the frame reader, in two
 * pieces as TLS hands a large one over. From 64 KiB, it lies in a buffer of its own, which the block
 * writer moves to its threads (see frames.ts `movable`).
 */
export function receivedBlock(data: Uint8Array): Buffer {
  const reader = new FrameReader();
  reader.push(encodeHello({ deviceName: '', clientName: 'test', clientVersion: 'v0' }));
  reader.next();
  const frame = encodeMessage({ kind: 'Response', body: create(ResponseSchema, { id: 1, data }) });
  reader.push(frame.subarray(0, 10));
  reader.push(frame.subarray(10));
  const read = reader.next();
  if (read?.kind !== 'message' || read.message.kind !== 'Response') throw new Error('no Response read');
  const { buffer, byteOffset, byteLength } = read.message.body.data;
  return Buffer.from(buffer, byteOffset, byteLength);
}
