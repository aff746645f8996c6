import { create, type DescMessage, fromBinary, type MessageShape, toBinary } from '@bufbuild/protobuf';
import {
  ClusterConfigSchema,
  CloseSchema,
  DownloadProgressSchema,
  IndexSchema,
  IndexUpdateSchema,
  MessageType,
  PingSchema,
  RequestSchema,
  ResponseSchema,
} from './bep_pb.ts';

/** The messages that follow the Hello, by their Syncthing name: the header's type and the body's schema. */
const kinds = {
  ClusterConfig: { type: MessageType.CLUSTER_CONFIG, schema: ClusterConfigSchema },
  Index: { type: MessageType.INDEX, schema: IndexSchema },
  IndexUpdate: { type: MessageType.INDEX_UPDATE, schema: IndexUpdateSchema },
  Request: { type: MessageType.REQUEST, schema: RequestSchema },
  Response: { type: MessageType.RESPONSE, schema: ResponseSchema },
  DownloadProgress: { type: MessageType.DOWNLOAD_PROGRESS, schema: DownloadProgressSchema },
  Ping: { type: MessageType.PING, schema: PingSchema },
  Close: { type: MessageType.CLOSE, schema: CloseSchema },
} as const satisfies Record<string, { type: MessageType; schema: DescMessage }>;

export type MessageKind = keyof typeof kinds;

/** A message of BEP, as sent and received after the Hello. */
export type BepMessage = {
  [K in MessageKind]: { kind: K; body: MessageShape<(typeof kinds)[K]['schema']> };
}[MessageKind];

export type MessageOf<K extends MessageKind> = Extract<BepMessage, { kind: K }>['body'];

const byType = new Map<number, MessageKind>(
  Object.entries(kinds).map(([kind, { type }]) => [type, kind as MessageKind]),
);

/** The name of header type `type`, for what a log says of it. */
export function kindOf(type: number): string {
  return byType.get(type) ?? `of type ${type}`;
}

export function typeOf(kind: MessageKind): MessageType {
  return kinds[kind].type;
}

/** The message's body as bytes. */
export function encodeBody(message: BepMessage): Uint8Array {
  return toBinary(kinds[message.kind].schema as DescMessage, message.body);
}

/**
 * The message of header type `type`, or undefined for a type this version does not know (skipped, as
 * Syncthing skips them, for forward compatibility). Malformed bytes throw.
 */
export function decodeBody(type: number, bytes: Uint8Array): BepMessage | undefined {
  const kind = byType.get(type);
  if (kind === undefined) return undefined;
  // Nothing here acts on another device's download progress (Syncthing shows it in its GUI only), and
  // its block indexes are scalars, millions of which fit in a message: it is read as empty.
  if (kind === 'DownloadProgress') return { kind, body: create(DownloadProgressSchema) };
  const body = fromBinary(kinds[kind].schema as DescMessage, bytes, { readUnknownFields: false });
  return { kind, body } as BepMessage;
}
