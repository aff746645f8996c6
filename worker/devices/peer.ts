import { create } from '@bufbuild/protobuf';
import type { Configuration, DeviceConfiguration } from '../../shared/config/defaults.ts';
import { deviceIdFromRaw, rawDeviceId } from '../../shared/device-id.ts';
import type { Logger } from '../../shared/logger.ts';
import { ErrorCode, ResponseSchema } from '../bep/bep_pb.ts';
import type { BepMessage, MessageOf } from '../bep/messages.ts';
import type { BepSession } from '../bep/session.ts';
import type { WorkerConfig } from '../config/worker-config.ts';
import type { EventLog } from '../events/event-log.ts';
import { MAX_BLOCK_SIZE } from '../records/blocks.ts';
import type { BlockServer } from './block-server.ts';
import { autoAcceptFolders } from './auto-accept.ts';
import { clusterConfigFor, foldersSharedWith, type IndexState } from './cluster-config.ts';
import { introduceFrom } from './introductions.ts';
import type { IndexExchange, IndexPeer } from './index-exchange.ts';
import type { PendingFolders } from './pending-folders.ts';

export interface PeerOptions {
  myId: string;
  config: WorkerConfig;
  events: EventLog;
  logger: Logger;
  index: IndexState;
  pendingFolders: PendingFolders;
  /** The index exchange, when there is an index: without one, indexes received are only checked. */
  exchange?: IndexExchange;
  /** What answers requests for blocks, when there is an index. */
  blocks?: BlockServer;
}

/**
 * One connected device's messages, answered (Syncthing's model side of a connection, lib/model/model.go
 * ClusterConfig, Index, Request; syncspirit's controller_actor): its ClusterConfig checked and its
 * offered folders recorded, its indexes given to the exchange, its requests to the block server. What
 * breaks the protocol closes this connection only.
 */
export class PeerController {
  readonly #options: PeerOptions;
  readonly #device: string;
  readonly #session: BepSession;
  readonly #indexPeer: IndexPeer;

  constructor(options: PeerOptions, device: string, session: BepSession, indexPeer: IndexPeer) {
    this.#options = options;
    this.#device = device;
    this.#session = session;
    this.#indexPeer = indexPeer;
  }

  get #config(): Configuration {
    return this.#options.config.current;
  }

  /** Tells the device which folders it shares here, with each device's index ID and sequence. */
  sendClusterConfig(): void {
    const device = this.#device;
    const body = clusterConfigFor(this.#config, device, this.#options.index);
    this.#options.logger.debug(
      {
        device,
        folders: body.folders.map((folder) => ({
          id: folder.id,
          devices: folder.devices.map(
            (entry) =>
              `${deviceIdFromRaw(entry.id).slice(0, 7)}:${entry.indexId.toString(16)}@${entry.maxSequence}`,
          ),
        })),
      },
      'ClusterConfig sent',
    );
    this.#session.send({ kind: 'ClusterConfig', body });
  }

  /** One message from the device; the session reads the next once a promise answered settles. */
  received(message: BepMessage): void | Promise<void> {
    const [session, device] = [this.#session, this.#device];
    this.#options.logger.debug({ device, kind: message.kind }, `${message.kind} from ${device}`);
    switch (message.kind) {
      case 'ClusterConfig': {
        // Syncthing 2.x marks the one on an extra connection of a device secondary: it lists no
        // folders, and says only that the connection is ready; 2.x skips it (model.go ClusterConfig).
        // The full one follows once that connection is the device's only one.
        if (message.body.secondary) {
          this.#options.logger.debug({ device }, 'a secondary ClusterConfig, skipped');
          return;
        }
        const problem = this.#clusterConfigProblem(message.body);
        if (problem) {
          session.close(`protocol error: ${problem}`);
          return;
        }
        this.#options.events.log('ClusterConfigReceived', { device });
        return this.#clusterConfig(message.body);
      }
      case 'Index':
      case 'IndexUpdate': {
        const { folder, files } = message.body;
        const { exchange } = this.#options;
        // The session reads the next message once this one is kept.
        if (exchange) {
          return exchange
            .received(this.#indexPeer, folder, files, message.kind === 'Index')
            .then((problem) => {
              if (problem) session.close(`protocol error: ${problem}`);
            });
        }
        if (!foldersSharedWith(this.#config, device).has(folder)) {
          session.close(
            `protocol error: ${message.kind} for folder ${JSON.stringify(folder)}, which is not shared with this device`,
          );
        }
        return;
      }
      case 'Request': {
        const { blocks } = this.#options;
        // Nothing to serve from without an index: the request is answered, and says so.
        const produce = blocks
          ? () => blocks.answer(device, message.body)
          : async () => create(ResponseSchema, { id: message.body.id, code: ErrorCode.GENERIC });
        // Counted against what this connection may have in flight until written (see session.answer).
        session.answer(Math.min(Math.max(message.body.size, 0), MAX_BLOCK_SIZE), produce);
        return;
      }
      // The session settles the Responses to its own requests (see session.ts request).
      case 'Response':
        session.close('protocol error: a Response to no Request');
        return;
      case 'DownloadProgress':
      case 'Ping':
      case 'Close':
        return;
    }
  }

  // Syncthing's order (model.go ClusterConfig): folders auto-accepted first, and waited for, so that
  // they exist when their indexes are exchanged; then what stays offered is pending, the indexes go
  // out, and an introducer's word is taken. The next message is read once all that is done.
  async #clusterConfig(body: MessageOf<'ClusterConfig'>): Promise<void> {
    const device = this.#device;
    const context = { config: this.#options.config, myId: this.#options.myId, logger: this.#options.logger };
    const failed = (what: string) => (error: Error) =>
      this.#options.logger.warn({ device, err: error }, `${what} from ${device} failed: ${error.message}`);
    if (this.#deviceConfig?.autoAcceptFolders)
      await autoAcceptFolders(context, device, body.folders).catch(failed('auto-accepting folders'));
    if (this.#session.ended) return;
    this.#options.pendingFolders.offered(device, body.folders, this.#config);
    this.#options.exchange?.clusterConfig(this.#indexPeer, body);
    if (!this.#deviceConfig?.introducer) return;
    let said: string[] = [];
    await this.#options.config
      .change((draft) => {
        said = introduceFrom(draft, device, body.folders, this.#options.myId);
      })
      .then(() => said.forEach((line) => this.#options.logger.info({ device }, line)))
      .catch(failed('introductions'));
  }

  get #deviceConfig(): DeviceConfiguration | undefined {
    return this.#config.devices.find((entry) => entry.deviceID === this.#device);
  }

  #clusterConfigProblem(config: MessageOf<'ClusterConfig'>): string | undefined {
    const device = this.#device;
    const shared = foldersSharedWith(this.#config, device);
    // Compared as bytes: a ClusterConfig may list up to the message's bound of devices.
    const mine = rawDeviceId(this.#options.myId);
    const theirs = rawDeviceId(device);
    for (const folder of config.folders) {
      for (const entry of folder.devices) {
        if (entry.id.length !== 32)
          return `folder ${JSON.stringify(folder.id)} lists a device ID of ${entry.id.length} bytes`;
      }
      if (!shared.has(folder.id)) continue;
      if (!folder.devices.some((entry) => mine.equals(entry.id)))
        return `this device is missing from folder ${JSON.stringify(folder.id)} in the ClusterConfig`;
      if (!folder.devices.some((entry) => theirs.equals(entry.id)))
        return `the sending device is missing from folder ${JSON.stringify(folder.id)} in its ClusterConfig`;
    }
    return undefined;
  }
}
