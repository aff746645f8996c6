import { create } from '@bufbuild/protobuf';
import type { Configuration } from '../../shared/config/defaults.ts';
import { deviceIdFromRaw } from '../../shared/device-id.ts';
import type { Logger } from '../../shared/logger.ts';
import { type FileInfo, IndexSchema, IndexUpdateSchema } from '../bep/bep_pb.ts';
import { fromFileInfo, toFileInfo } from '../bep/file-info.ts';
import { isInternal } from '../files/folder-fs.ts';
import type { MessageOf } from '../bep/messages.ts';
import type { EventLog } from '../events/event-log.ts';
import type { FileRecord } from '../records/file-record.ts';
import type { IndexDb } from '../index-db/index-db.ts';
import { foldersSharedWith, isRunning } from './cluster-config.ts';

// Syncthing's batches (lib/db/util.go): at most 1,000 files or 250 KiB of them per message.
const BATCH_FILES = 1000;
const BATCH_BYTES = 250 * 1024;
// The first message of an index is smaller: the device starts pulling from it while the rest is read
// and encoded (2,000 files took about 100 ms of a fresh worker's thread before the device had any).
const FIRST_BATCH_FILES = 100;
// Files of a received index taken in one pass of the event loop, and written in one transaction.
const SLICE_FILES = 1000;

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** What the exchange needs of a connection: whom it is with, and a way to send. */
export interface IndexPeer {
  device: string;
  send(
    message:
      | { kind: 'Index'; body: MessageOf<'Index'> }
      | { kind: 'IndexUpdate'; body: MessageOf<'IndexUpdate'> },
  ): void;
}

/**
 * Per connection and folder, once its index is due: the highest local sequence sent, whether nothing
 * went out yet of a full index (which starts with an Index), and whether a send is under way.
 */
interface Sending {
  last: number;
  full: boolean;
  busy: boolean;
}
type Sent = Map<string, Sending>;

/**
 * The index exchange of Syncthing's protocol, per connected device and shared folder: what this
 * device sends (its whole index the first time, only what changed when the device already has it at
 * this index ID: delta indexes; then every local change as it is recorded), and what it keeps of the
 * device's (an Index replaces, an IndexUpdate adds; a new index ID from the device drops what it sent
 * before).
 */
export class IndexExchange {
  readonly #db: IndexDb;
  readonly #myId: string;
  readonly #events: EventLog;
  readonly #logger: Logger;
  readonly #config: () => Configuration;
  readonly #remoteUpdated: (folder: string) => void;
  readonly #peers = new Map<IndexPeer, Sent>();
  /** The last ClusterConfig of each connection, for what it says of folders shared later. */
  readonly #configs = new Map<IndexPeer, MessageOf<'ClusterConfig'>>();
  /** Connections that ended: what is still being kept of their indexes stops. */
  readonly #gone = new WeakSet<IndexPeer>();

  constructor(options: {
    db: IndexDb;
    myId: string;
    events: EventLog;
    logger: Logger;
    config: () => Configuration;
    /** A device's index of the folder changed: there may be something to pull. */
    remoteUpdated?: (folder: string) => void;
  }) {
    this.#remoteUpdated = options.remoteUpdated ?? (() => {});
    this.#db = options.db;
    this.#myId = options.myId;
    this.#events = options.events;
    this.#logger = options.logger;
    this.#config = options.config;
  }

  /** The index ID and highest sequence known of `device`'s index of `folder`, for a ClusterConfig. */
  known(folder: string, device: string): { indexId: bigint; maxSequence: bigint } {
    if (device === this.#myId) {
      const { indexId, sequence } = this.#db.folder(folder);
      return { indexId, maxSequence: BigInt(sequence) };
    }
    const { indexId, maxSequence } = this.#db.remoteIndex(folder, device);
    return { indexId, maxSequence: BigInt(maxSequence) };
  }

  /**
   * The device's ClusterConfig: for each folder shared with it, what it says of its own index (a new
   * index ID drops what it sent before) and of this device's (whether it needs everything or only what
   * came after what it has), then this device's index goes out accordingly.
   */
  clusterConfig(peer: IndexPeer, config: MessageOf<'ClusterConfig'>): void {
    this.#configs.set(peer, config);
    this.reconsider(peer);
  }

  /**
   * Acts on the device's last ClusterConfig again: after a change of what is shared with it, a folder
   * shared now gets its index sent.
   */
  reconsider(peer: IndexPeer): void {
    const config = this.#configs.get(peer);
    if (!config) return;
    const shared = foldersSharedWith(this.#config(), peer.device);
    let sent = this.#peers.get(peer);
    if (!sent) this.#peers.set(peer, (sent = new Map()));
    for (const folder of config.folders) {
      if (!shared.has(folder.id) || !isRunning(folder)) continue;
      const { aboutThem, aboutUs } = this.#entries(peer, folder);
      this.#adopt(peer, folder.id, aboutThem?.indexId ?? 0n);
      if (sent.has(folder.id)) continue;
      const ours = this.#db.folder(folder.id);
      const delta =
        aboutUs !== undefined &&
        aboutUs.indexId === ours.indexId &&
        aboutUs.maxSequence <= BigInt(ours.sequence);
      const after = delta ? Number(aboutUs?.maxSequence ?? 0n) : 0;
      // From the start, it is a full index, as Syncthing sends it (indexhandler.go: whenever it sends
      // from sequence 0, even to a device that knows this index ID).
      const sending = { last: after, full: after === 0, busy: false };
      sent.set(folder.id, sending);
      this.#send(peer, folder.id, sending);
    }
  }

  #entries(peer: IndexPeer, folder: MessageOf<'ClusterConfig'>['folders'][number]) {
    let aboutThem: { indexId: bigint; maxSequence: bigint } | undefined;
    let aboutUs: { indexId: bigint; maxSequence: bigint } | undefined;
    for (const device of folder.devices) {
      const id = deviceIdFromRaw(device.id);
      if (id === peer.device) aboutThem = device;
      if (id === this.#myId) aboutUs = device;
    }
    return { aboutThem, aboutUs };
  }

  /** The device's index ID of the folder, as its ClusterConfig says: a new one drops what it sent. */
  #adopt(peer: IndexPeer, folder: string, theirs: bigint): void {
    const stored = this.#db.remoteIndex(folder, peer.device);
    if (theirs === stored.indexId) return;
    this.#logger.info(
      { device: peer.device, folder, indexId: theirs.toString(16) },
      `device ${peer.device} has a new index ID for folder ${folder}: what it sent before is dropped`,
    );
    this.#db.resetRemote(folder, peer.device, theirs);
  }

  /** Local changes just recorded: to every connected device that shares the folder and has its index. */
  localUpdated(folder: string, records: FileRecord[]): void {
    for (const [peer, sent] of this.#peers) {
      const sending = sent.get(folder);
      if (sending === undefined) continue;
      // No longer shared with it: it hears of the folder again when it is shared again.
      if (!foldersSharedWith(this.#config(), peer.device).has(folder)) {
        sent.delete(folder);
        continue;
      }
      // What the scan wrote since is in the index too: sent from where this device left off.
      if (records.some((record) => record.sequence > sending.last)) this.#send(peer, folder, sending);
    }
  }

  /**
   * An Index or IndexUpdate from the device: kept, or the reason it breaks the rules (the connection
   * then closes; nothing of it is kept). The folder must be shared with the device. The work goes in
   * slices, the event loop let go between them, and the writes in transactions of a slice each, so
   * that a large index leaves the worker answering meanwhile.
   */
  async received(
    peer: IndexPeer,
    folder: string,
    files: FileInfo[],
    replace: boolean,
  ): Promise<string | undefined> {
    const what = `${replace ? 'Index' : 'IndexUpdate'} for folder ${JSON.stringify(folder)}`;
    const configured = this.#config().folders.find((entry) => entry.id === folder);
    if (!configured || !foldersSharedWith(this.#config(), peer.device).has(folder)) {
      return `${what}, which is not shared with this device`;
    }
    const records: FileRecord[] = [];
    for (let at = 0; at < files.length; at += SLICE_FILES) {
      if (at > 0) await nextTurn();
      for (const info of files.slice(at, at + SLICE_FILES)) {
        const record = fromFileInfo(info);
        if (typeof record === 'string') return `${what}: ${record}`;
        // The folder's own names are never taken from another device (Syncthing ignores them: its
        // ShouldIgnore takes internal and temporary names).
        if (!isInternal(record.name, configured.markerName)) records.push(record);
      }
    }
    // The index ID its ClusterConfig gave, if it came before this folder was shared here.
    const announced = this.#configs.get(peer)?.folders.find((entry) => entry.id === folder);
    if (announced) this.#adopt(peer, folder, this.#entries(peer, announced).aboutThem?.indexId ?? 0n);
    for (let at = 0; at === 0 || at < records.length; at += SLICE_FILES) {
      if (at > 0) await nextTurn();
      // Gone meanwhile (the connection, or the sharing): what is left is not kept.
      if (this.#gone.has(peer) || !foldersSharedWith(this.#config(), peer.device).has(folder)) {
        return undefined;
      }
      this.#db.putRemote(folder, peer.device, records.slice(at, at + SLICE_FILES), replace && at === 0);
    }
    const { maxSequence } = this.#db.remoteIndex(folder, peer.device);
    this.#events.log('RemoteIndexUpdated', {
      device: peer.device,
      folder,
      items: files.length,
      sequence: maxSequence,
      version: maxSequence,
    });
    this.#remoteUpdated(folder);
    return undefined;
  }

  /** The connection ended. */
  forget(peer: IndexPeer): void {
    this.#gone.add(peer);
    this.#peers.delete(peer);
    this.#configs.delete(peer);
  }

  /**
   * Sends this device's records of the folder after the last sent, in batches, until none is left: the
   * first at once, each next one in a later pass of the event loop, so that the device's requests are
   * answered meanwhile. While a send is under way, records written meanwhile are sent by it.
   */
  #send(peer: IndexPeer, folder: string, sending: Sending): void {
    if (sending.busy) return;
    sending.busy = true;
    const step = () => {
      // The connection ended, or the folder is no longer shared with it (or anew): nothing more goes.
      if (this.#peers.get(peer)?.get(folder) !== sending) return;
      try {
        if (this.#sendBatch(peer, folder, sending)) {
          setImmediate(step);
          return;
        }
      } catch (error) {
        // The index closed under it (the service stopping): the device hears the rest next time.
        this.#logger.warn({ device: peer.device, folder, err: error }, 'sending the index stopped');
      }
      sending.busy = false;
    };
    step();
  }

  /** Sends the next records; false when there were none. */
  #sendBatch(peer: IndexPeer, folder: string, sending: Sending): boolean {
    const limit = sending.full ? FIRST_BATCH_FILES : BATCH_FILES;
    // One more than a batch: the deletion that may follow its last file (see below).
    const records = this.#db.localSince(folder, sending.last, limit + 1);
    if (records.length === 0) return false;
    let batch: FileInfo[] = [];
    let bytes = 0;
    const flush = () => {
      if (batch.length === 0) return;
      const body = { folder, files: batch };
      // A full index starts with an Index (which replaces what the device had), and goes on in updates.
      if (sending.full) peer.send({ kind: 'Index', body: create(IndexSchema, body) });
      else peer.send({ kind: 'IndexUpdate', body: create(IndexUpdateSchema, body) });
      sending.full = false;
      batch = [];
      bytes = 0;
    };
    let previousWasDeleted = false;
    for (const [index, record] of records.entries()) {
      // A full batch goes, unless a deletion follows a file: a rename (a new file, then the old one
      // deleted) stays in one message, as Syncthing keeps it (indexhandler.go). The record read past
      // the batch is sent now only as such a deletion; otherwise it starts the next batch.
      if ((batch.length >= limit || bytes >= BATCH_BYTES) && (!record.deleted || previousWasDeleted)) {
        if (index >= limit) break;
        flush();
      }
      batch.push(toFileInfo(record));
      bytes += 100 + record.name.length + record.blocks.length * 48;
      sending.last = record.sequence;
      previousWasDeleted = record.deleted;
    }
    flush();
    return true;
  }
}
