import { create } from '@bufbuild/protobuf';
import type { Configuration, DeviceConfiguration } from '../../shared/config/defaults.ts';
import { rawDeviceId } from '../../shared/device-id.ts';
import {
  type ClusterConfig,
  ClusterConfigSchema,
  Compression,
  FolderStopReason,
  FolderType,
} from '../bep/bep_pb.ts';
import type { Compression as FrameCompression } from '../bep/frames.ts';

/** What the index knows of a folder: its index ID and highest sequence, ours or a device's. */
export type IndexState = (folder: string, device: string) => { indexId: bigint; maxSequence: bigint };

const compressions: Record<string, Compression> = {
  metadata: Compression.METADATA,
  never: Compression.NEVER,
  always: Compression.ALWAYS,
};

/** How messages to a device are compressed: its `compression` setting, Syncthing's default otherwise. */
export function compressionFor(device: DeviceConfiguration | undefined): FrameCompression {
  const setting = device?.compression;
  return setting === 'never' || setting === 'always' ? setting : 'metadata';
}

/**
 * The ClusterConfig sent to `peer`: every folder shared with it, each listing every device that
 * shares it, this one and the peer included (Syncthing closes a connection whose ClusterConfig misses
 * either), with the index ID and highest sequence known of each.
 */
export function clusterConfigFor(config: Configuration, peer: string, index: IndexState): ClusterConfig {
  const devices = new Map(config.devices.map((device) => [device.deviceID, device]));
  const folders = config.folders
    .filter((folder) => folder.devices.some((shared) => shared.deviceID === peer))
    .map((folder) => ({
      id: folder.id,
      label: folder.label,
      // 1.19's read_only (true for send-only alone) is the same varint as 2.x's type SEND_ONLY, and
      // false its SEND_RECEIVE: both read it alike. A receive-only folder's 2 would be read_only to 1.19.
      type: folder.type === 'sendonly' ? FolderType.SEND_ONLY : FolderType.SEND_RECEIVE,
      ignorePermissions: folder.ignorePerms,
      ignoreDelete: folder.ignoreDelete,
      disableTempIndexes: folder.disableTempIndexes,
      stopReason: folder.paused ? FolderStopReason.PAUSED : FolderStopReason.RUNNING,
      devices: folder.devices.map(({ deviceID }) => {
        const device = devices.get(deviceID);
        const { indexId, maxSequence } = index(folder.id, deviceID);
        return {
          id: rawDeviceId(deviceID),
          name: device?.name ?? '',
          addresses: device?.addresses ?? [],
          compression: compressions[device?.compression ?? 'metadata'] ?? Compression.METADATA,
          certName: device?.certName ?? '',
          maxSequence,
          introducer: device?.introducer ?? false,
          indexId,
          // Syncthing 1.19's generateClusterConfig leaves skip_introduction_removals unset.
        };
      }),
    }));
  return create(ClusterConfigSchema, { folders });
}

/**
 * Whether a device's folder runs there: 1.19's paused is true, 2.x's stop reason PAUSED, the same
 * varint 1. Another stop reason (none yet) leaves it running, as 2.x reads it (bep_clusterconfig.go
 * IsRunning).
 */
export function isRunning(folder: ClusterConfig['folders'][number]): boolean {
  return folder.stopReason !== FolderStopReason.PAUSED;
}

/** A folder as a device's ClusterConfig offers it. */
export type OfferedFolder = ClusterConfig['folders'][number];

/** A folder as Syncthing names it in its log lines (protocol.Folder Description): "label" (id). */
export function folderDescription(folder: { id: string; label: string }): string {
  return folder.label === '' ? folder.id : `${JSON.stringify(folder.label)} (${folder.id})`;
}

/** Whether an offered folder carries an encryption password token for `device` (its data encrypted). */
export function encryptedFor(folder: OfferedFolder, device: string): boolean {
  const raw = rawDeviceId(device);
  return folder.devices.some((entry) => raw.equals(entry.id) && entry.encryptionPasswordToken.length > 0);
}

/** The IDs of the folders this device shares with `peer`. */
export function foldersSharedWith(config: Configuration, peer: string): Set<string> {
  return new Set(
    config.folders
      .filter((folder) => folder.devices.some((shared) => shared.deviceID === peer))
      .map((folder) => folder.id),
  );
}
