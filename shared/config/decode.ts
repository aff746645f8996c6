import { parseCidr } from '../cidr.ts';
import { isBcryptHash } from '../gui-password.ts';
import { homedir } from 'node:os';
import { isAbsolute, resolve, sep } from 'node:path';
import { parseAddress } from '../address.ts';
import { canonicalDeviceId, compareDeviceIds, deviceIdProblem } from '../device-id.ts';
import { MIN_API_KEY_LENGTH } from '../settings.ts';
import {
  type Configuration,
  DEVICE_DEFAULTS,
  type DeviceConfiguration,
  emptyConfiguration,
  FOLDER_DEFAULTS,
  type FolderConfiguration,
  GUI_DEFAULTS,
  IGNORES_DEFAULTS,
  LDAP_DEFAULTS,
  OPTIONS_DEFAULTS,
  SYNCTHING_CONFIG_VERSION,
} from './defaults.ts';
import { checkFieldStatus } from './field-status.ts';
import { ConfigProblem, describe, isObject, overlay, type UnknownFields } from './shape.ts';

const TOP_LEVEL = new Set(Object.keys(emptyConfiguration()));

/**
 * A whole configuration from JSON, as Syncthing reads one (PUT /rest/config, the file): each folder and
 * device starts from the `defaults` given with it, every other section from Syncthing's defaults; then
 * `prepare`. Throws a ConfigProblem naming the first field that cannot be used; a field Syncthing
 * does not have is one, unless `unknown` is 'ignore' (a request body, see UnknownFields).
 */
export function decodeConfiguration(
  input: unknown,
  myId: string,
  deviceName: string,
  unknown: UnknownFields = 'refuse',
): Configuration {
  if (!isObject(input))
    throw new ConfigProblem('', `the configuration must be a JSON object, not ${describe(input)}`);
  for (const key of Object.keys(input)) {
    if (!TOP_LEVEL.has(key) && unknown === 'refuse') {
      throw new ConfigProblem(key, 'is not a field of the configuration');
    }
  }
  if (input.version !== undefined && input.version !== null && typeof input.version !== 'number') {
    throw new ConfigProblem('version', `must be a number, not ${describe(input.version)}`);
  }
  const defaults = overlay(emptyConfiguration().defaults, input.defaults, 'defaults', unknown);
  const config: Configuration = {
    version: SYNCTHING_CONFIG_VERSION,
    folders: list(input.folders, 'folders').map((item, i) =>
      overlay(defaults.folder, item, `folders[${i}]`, unknown),
    ),
    devices: list(input.devices, 'devices').map((item, i) =>
      overlay(defaults.device, item, `devices[${i}]`, unknown),
    ),
    gui: overlay(GUI_DEFAULTS, input.gui, 'gui', unknown),
    ldap: overlay(LDAP_DEFAULTS, input.ldap, 'ldap', unknown),
    options: overlay(OPTIONS_DEFAULTS, input.options, 'options', unknown),
    remoteIgnoredDevices: overlay(
      [] as Configuration['remoteIgnoredDevices'],
      input.remoteIgnoredDevices,
      'remoteIgnoredDevices',
      unknown,
    ),
    defaults,
  };
  return prepare(config, myId, deviceName);
}

/** The parts a request may replace on their own, from Syncthing's defaults (PUT /rest/config/options…). */
export const sectionDefaults = {
  gui: GUI_DEFAULTS,
  ldap: LDAP_DEFAULTS,
  options: OPTIONS_DEFAULTS,
  folder: FOLDER_DEFAULTS,
  device: DEVICE_DEFAULTS,
  ignores: IGNORES_DEFAULTS,
};

/**
 * Checks a configuration and brings it to the form Syncthing keeps: device IDs in their canonical form,
 * this device in the device list and in every folder's, lists sorted, Syncthing's corrections of zero
 * values. Returns a new configuration; throws a ConfigProblem naming the field that cannot be used.
 * Where Syncthing quietly drops something (a folder shared with a device that is not configured, a
 * device listed twice), syncd refuses: the client meant something that would not happen.
 */
export function prepare(input: Configuration, myId: string, deviceName: string): Configuration {
  const config = structuredClone(input);
  config.version = SYNCTHING_CONFIG_VERSION;

  const known = new Set<string>();
  config.devices.forEach((device, i) => {
    checkDevice(device, `devices[${i}]`);
    if (known.has(device.deviceID)) {
      throw new ConfigProblem(`devices[${i}].deviceID`, `${device.deviceID} is listed twice`);
    }
    known.add(device.deviceID);
  });
  if (!known.has(myId)) {
    config.devices.push({ ...structuredClone(DEVICE_DEFAULTS), deviceID: myId, name: deviceName });
    known.add(myId);
  }
  config.devices.sort((a, b) => compareDeviceIds(a.deviceID, b.deviceID));

  const folderIds = new Set<string>();
  config.folders.forEach((folder, i) => {
    const field = `folders[${i}]`;
    if (folder.id === '') throw new ConfigProblem(`${field}.id`, 'is missing: every folder needs an ID');
    if (folderIds.has(folder.id)) {
      throw new ConfigProblem(`${field}.id`, `"${folder.id}" is the ID of another folder too`);
    }
    folderIds.add(folder.id);
    prepareFolder(folder, field, myId, known);
  });
  config.folders.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));

  checkGui(config.gui);
  checkOptions(config.options);

  config.remoteIgnoredDevices.forEach((observed, i) => {
    observed.deviceID = deviceIdAt(observed.deviceID, `remoteIgnoredDevices[${i}].deviceID`);
  });
  config.remoteIgnoredDevices = config.remoteIgnoredDevices.filter(
    (observed) => !known.has(observed.deviceID),
  );

  // The defaults are checked as what they are: a device without an ID, a folder without ID or path.
  checkDevice({ ...config.defaults.device, deviceID: myId }, 'defaults.device');
  config.defaults.device.deviceID = '';
  prepareFolder(config.defaults.folder, 'defaults.folder', myId, known, { template: true });
  checkFieldStatus(config);
  return config;
}

function prepareFolder(
  folder: FolderConfiguration,
  field: string,
  myId: string,
  known: ReadonlySet<string>,
  { template = false } = {},
): void {
  if (!template) {
    if (folder.path === '') throw new ConfigProblem(`${field}.path`, 'is missing: every folder needs a path');
    if (!isAbsolute(folder.path) && folder.path !== '~' && !folder.path.startsWith('~/')) {
      throw new ConfigProblem(
        `${field}.path`,
        `"${folder.path}" is relative: give an absolute path (or one starting with ~/)`,
      );
    }
  }
  oneOf(folder.type, `${field}.type`, ['sendreceive', 'sendonly', 'receiveonly'], {
    receiveencrypted: 'receive-encrypted folders are not supported by syncd',
  });
  oneOf(folder.filesystemType, `${field}.filesystemType`, ['basic']);
  oneOf(folder.order, `${field}.order`, [
    'random',
    'alphabetic',
    'smallestFirst',
    'largestFirst',
    'oldestFirst',
    'newestFirst',
  ]);
  oneOf(folder.blockPullOrder, `${field}.blockPullOrder`, ['standard', 'random', 'inOrder']);
  // Syncthing takes any type and fails at the folder's start; syncd says so now.
  oneOf(folder.versioning.type, `${field}.versioning.type`, [
    '',
    'trashcan',
    'simple',
    'staggered',
    'external',
  ]);
  oneOf(folder.versioning.fsType, `${field}.versioning.fsType`, ['basic']);
  if (!template) checkVersionsPath(folder, field);

  const seen = new Set<string>();
  folder.devices.forEach((shared, i) => {
    const at = `${field}.devices[${i}].deviceID`;
    shared.deviceID = deviceIdAt(shared.deviceID, at);
    if (!known.has(shared.deviceID)) {
      throw new ConfigProblem(
        at,
        `${shared.deviceID} is not a configured device: add it to the devices first`,
      );
    }
    if (seen.has(shared.deviceID)) throw new ConfigProblem(at, `${shared.deviceID} is listed twice`);
    shared.introducedBy = introducerAt(shared.introducedBy, `${field}.devices[${i}].introducedBy`);
    seen.add(shared.deviceID);
  });
  if (!seen.has(myId)) folder.devices.push({ deviceID: myId, introducedBy: '', encryptionPassword: '' });
  folder.devices.sort((a, b) => compareDeviceIds(a.deviceID, b.deviceID));

  // Syncthing's corrections, so that a client sending zero values (its CLI does) gets what Syncthing keeps.
  const maxRescanS = 365 * 24 * 60 * 60;
  folder.rescanIntervalS = Math.min(Math.max(folder.rescanIntervalS, 0), maxRescanS);
  if (folder.fsWatcherDelayS <= 0) {
    folder.fsWatcherEnabled = false;
    folder.fsWatcherDelayS = 10;
  }
  folder.versioning.cleanupIntervalS = Math.min(Math.max(folder.versioning.cleanupIntervalS, 0), maxRescanS);
  if (folder.weakHashThresholdPct === 0) folder.weakHashThresholdPct = 25;
  if (folder.markerName === '') folder.markerName = '.stfolder';
  if (folder.maxConcurrentWrites <= 0) folder.maxConcurrentWrites = 2;
  folder.maxConcurrentWrites = Math.min(folder.maxConcurrentWrites, 64);
}

// Versions kept in the folder's root, or above it, would be among the files they version (and a
// cleanout would delete the user's files): refused, where Syncthing takes them.
function checkVersionsPath(folder: FolderConfiguration, field: string): void {
  const { fsPath } = folder.versioning;
  if (fsPath === '') return;
  const home = (path: string) => (path === '~' || path.startsWith('~/') ? homedir() + path.slice(1) : path);
  const root = resolve(home(folder.path));
  const versions = isAbsolute(home(fsPath)) ? resolve(home(fsPath)) : resolve(root, fsPath);
  if (versions === root || root.startsWith(`${versions}${sep}`) || versions === sep) {
    throw new ConfigProblem(
      `${field}.versioning.fsPath`,
      `"${fsPath}" is the folder itself or holds it: give a directory of its own for the versions (empty: .stversions)`,
    );
  }
}

function checkDevice(device: DeviceConfiguration, field: string): void {
  device.deviceID = deviceIdAt(device.deviceID, `${field}.deviceID`);
  device.introducedBy = introducerAt(device.introducedBy, `${field}.introducedBy`);
  oneOf(device.compression, `${field}.compression`, ['metadata', 'always', 'never']);
  device.addresses.forEach((address, i) => {
    if (address === 'dynamic') return;
    if (!isDeviceAddress(address)) {
      throw new ConfigProblem(
        `${field}.addresses[${i}]`,
        `"${address}" is neither "dynamic" nor an address such as tcp://192.0.2.1:22000`,
      );
    }
  });
  nonNegative(device, field, ['maxSendKbps', 'maxRecvKbps', 'maxRequestKiB']);
  device.allowedNetworks.forEach((net, at) => {
    if (!parseCidr(net.startsWith('!') ? net.slice(1) : net)) {
      throw new ConfigProblem(
        `${field}.allowedNetworks[${at}]`,
        `"${net}" is not a network such as 192.168.1.0/24 (or !192.168.1.0/24 to refuse one)`,
      );
    }
  });
}

/** Whether `address` is one a device's `addresses` may hold besides `dynamic`: tcp://HOST:PORT and the like. */
export function isDeviceAddress(address: string): boolean {
  return /^(tcp[46]?|quic[46]?|relay):\/\/\S+$/.test(address);
}

function checkGui(gui: Configuration['gui']): void {
  if (!gui.enabled)
    throw new ConfigProblem('gui.enabled', 'must be true: syncd always serves its REST interface');
  const address = parseAddress(gui.address);
  if (typeof address === 'string') throw new ConfigProblem('gui.address', address);
  if (gui.apiKey.length < MIN_API_KEY_LENGTH) {
    throw new ConfigProblem('gui.apiKey', `must have at least ${MIN_API_KEY_LENGTH} characters`);
  }
  // A password reaches the configuration hashed (config routes, config-file.ts): a text that is not a
  // bcrypt hash here would be a password no one could log in with.
  if (gui.password !== '' && !isBcryptHash(gui.password)) {
    throw new ConfigProblem(
      'gui.password',
      'must be a bcrypt hash ($2a$10$…); give a new password through the REST API, which hashes it',
    );
  }
  if (gui.unixSocketPermissions !== '') {
    throw new ConfigProblem('gui.unixSocketPermissions', 'must be empty: syncd listens on TCP only');
  }
}

function checkOptions(options: Configuration['options']): void {
  nonNegative(options, 'options', [
    'maxSendKbps',
    'maxRecvKbps',
    'reconnectionIntervalS',
    'localAnnouncePort',
    'keepTemporariesH',
    'relayReconnectIntervalM',
    'connectionLimitEnough',
    'connectionLimitMax',
  ]);
  options.alwaysLocalNets.forEach((net, at) => {
    if (!parseCidr(net)) {
      throw new ConfigProblem(
        `options.alwaysLocalNets[${at}]`,
        `"${net}" is not a network such as 192.168.1.0/24`,
      );
    }
  });
  if (options.localAnnouncePort > 65535) {
    throw new ConfigProblem(
      'options.localAnnouncePort',
      `${options.localAnnouncePort} is not a port (0 to 65535)`,
    );
  }
}

function deviceIdAt(text: string, field: string): string {
  if (text === '') throw new ConfigProblem(field, 'is missing');
  const problem = deviceIdProblem(text);
  if (problem) throw new ConfigProblem(field, `"${text}" is not a device ID: ${problem}`);
  return canonicalDeviceId(text);
}

// Syncthing reads introducedBy as a device ID, the empty one standing for none.
function introducerAt(text: string, field: string): string {
  return text === '' ? '' : deviceIdAt(text, field);
}

function list(value: unknown, field: string): unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new ConfigProblem(field, `must be a list, not ${describe(value)}`);
  return value;
}

function oneOf(value: string, field: string, allowed: string[], refused: Record<string, string> = {}): void {
  const why = refused[value];
  if (why !== undefined) throw new ConfigProblem(field, why);
  if (!allowed.includes(value)) {
    throw new ConfigProblem(
      field,
      `${JSON.stringify(value)} is not one of ${allowed.map((a) => `"${a}"`).join(', ')}`,
    );
  }
}

function nonNegative<T>(object: T, field: string, keys: Array<keyof T & string>): void {
  for (const key of keys) {
    const value = object[key] as number;
    if (value < 0) throw new ConfigProblem(`${field}.${key}`, `must not be negative, not ${value}`);
  }
}
