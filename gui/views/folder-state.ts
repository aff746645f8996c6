// What a folder's badge says, as Syncthing's GUI works it out (folderStatus in syncthingController.js,
// 1.19): the paused setting first, then the service's state, and an idle folder told apart by what it
// still lacks, its failed items, its local additions, or having no device to share with.
import type { FolderConfiguration, FolderStatus } from '../types.ts';

export type FolderStateName =
  | 'paused'
  | 'unknown'
  | 'error'
  | 'idle'
  | 'unshared'
  | 'outofsync'
  | 'faileditems'
  | 'localadditions'
  | 'scanning'
  | 'scan-waiting'
  | 'syncing'
  | 'sync-waiting'
  | 'sync-preparing'
  | 'cleaning'
  | 'clean-waiting';

export function folderState(folder: FolderConfiguration, status: FolderStatus | undefined): FolderStateName {
  if (folder.paused) return 'paused';
  if (!status?.state) return 'unknown';
  if (status.state !== 'idle') return status.state as FolderStateName;
  if (status.needTotalItems > 0) return 'outofsync';
  if (status.pullErrors > 0 || status.errors > 0) return 'faileditems';
  if (status.receiveOnlyTotalItems > 0) return 'localadditions';
  if (folder.devices.length <= 1) return 'unshared';
  return 'idle';
}

export const STATE_LABELS: Record<FolderStateName, string> = {
  paused: 'Paused',
  unknown: 'Unknown',
  error: 'Error',
  idle: 'Up to date',
  unshared: 'Unshared',
  outofsync: 'Out of sync',
  faileditems: 'Failed items',
  localadditions: 'Local additions',
  scanning: 'Scanning',
  'scan-waiting': 'Waiting to scan',
  syncing: 'Syncing',
  'sync-waiting': 'Waiting to sync',
  'sync-preparing': 'Preparing to sync',
  cleaning: 'Cleaning versions',
  'clean-waiting': 'Waiting to clean',
};

export function stateTone(state: FolderStateName): 'ok' | 'busy' | 'warn' | 'error' | 'idle' {
  if (state === 'idle') return 'ok';
  if (state === 'error' || state === 'faileditems') return 'error';
  if (state === 'outofsync' || state === 'localadditions') return 'warn';
  if (state === 'paused' || state === 'unshared' || state === 'unknown') return 'idle';
  return 'busy';
}

export const TYPE_LABELS: Record<string, string> = {
  sendreceive: 'Send & receive',
  sendonly: 'Send only',
  receiveonly: 'Receive only',
  receiveencrypted: 'Receive encrypted',
};

export const VERSIONING_LABELS: Record<string, string> = {
  '': 'None',
  trashcan: 'Trash can',
  simple: 'Simple',
  staggered: 'Staggered',
  external: 'External',
};

export const folderName = (folder: FolderConfiguration) => folder.label || folder.id;
