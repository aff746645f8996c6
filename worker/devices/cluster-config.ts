import { create } from '@bufbuild/protobuf';
import type { Configuration, DeviceConfiguration } from '../../shared/config/defaults.ts';
import { rawDeviceId } from '../../shared/device-id.ts';
import { type ClusterConfig, ClusterConfigSchema, Compression } from '../bep/bep_pb.ts';
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
      readOnly: folder.type === 'sendonly',
      ignorePermissions: folder.ignorePerms,
      ignoreDelete: folder.ignoreDelete,
      disableTempIndexes: folder.disableTempIndexes,
      paused: folder.paused,
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
          skipIntroductionRemovals: device?.skipIntroductionRemovals ?? false,
        };
      }),
    }));
  return create(ClusterConfigSchema, { folders });
}

/** The IDs of the folders this device shares with `peer`. */
export function foldersSharedWith(config: Configuration, peer: string): Set<string> {
  return new Set(
    config.folders
      .filter((folder) => folder.devices.some((shared) => shared.deviceID === peer))
      .map((folder) => folder.id),
  );
}
