import type { ErrorCode } from './bep_pb.ts';

/** What a request for a block names. */
export interface BlockRequest {
  folder: string;
  name: string;
  offset: bigint;
  size: number;
  hash: Uint8Array;
  blockNo: number;
  fromTemporary: boolean;
}

/** A request for a block that got no data: the device's error code, or the connection gone. */
export class RequestError extends Error {
  readonly code: ErrorCode;
  constructor(message: string, code: ErrorCode) {
    super(message);
    this.name = 'RequestError';
    this.code = code;
  }
}
