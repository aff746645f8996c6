import { isDeepStrictEqual } from 'node:util';
import {
  type Configuration,
  DEVICE_DEFAULTS,
  type FolderConfiguration,
  FOLDER_DEFAULTS,
  FOLDER_DEVICE,
  GUI_DEFAULTS,
  LDAP_DEFAULTS,
  OPTIONS_DEFAULTS,
} from './defaults.ts';
import { ConfigProblem, isObject } from './shape.ts';

/**
 * What syncd does with a field of Syncthing's configuration:
 * - `acts`: as in Syncthing (within the values the field's checks allow);
 * - `stored`: kept and served, and Syncthing's service does nothing more with it either (what its GUI
 *   keeps there, or what has effect only on another system);
 * - `fixed`: syncd always does what its default value says (which may differ from Syncthing's);
 * - `refused`: syncd does not act on it.
 * A `fixed` or `refused` field keeps its default: another value is refused with 400 naming the field,
 * and `why` says why, so that nothing is accepted and then ignored.
 */
export type FieldStatus =
  | { status: 'acts'; note?: string }
  | { status: 'stored'; note: string }
  | { status: 'fixed' | 'refused'; why: string };

const acts = (note?: string): FieldStatus => ({ status: 'acts', ...(note ? { note } : {}) });
const stored = (note: string): FieldStatus => ({ status: 'stored', note });
const refused = (why: string): FieldStatus => ({ status: 'refused', why });
const fixed = (why: string): FieldStatus => ({ status: 'fixed', why });

const noReports = 'syncd sends no usage or crash reports';
const noUpgrades = 'syncd does not upgrade itself';
const noLdap = 'syncd has no LDAP login: the GUI logs in with gui.user and gui.password';
const noNat = 'syncd does no NAT traversal (UPnP, NAT-PMP, STUN): a relay reaches a device behind NAT';
const noTuning = "syncd has no such tuning: Syncthing's default is what it does";

type Table<T> = Record<keyof T & string, FieldStatus>;

export const FOLDER_FIELDS: Table<typeof FOLDER_DEFAULTS> = {
  id: acts(),
  label: acts(),
  filesystemType: acts('only "basic"'),
  path: acts('absolute or ~/…; required (syncd does not default to the home folder)'),
  type: acts('not "receiveencrypted"'),
  devices: acts(),
  rescanIntervalS: acts(),
  fsWatcherEnabled: acts(),
  fsWatcherDelayS: acts(),
  ignorePerms: acts(),
  autoNormalize: acts(),
  minDiskFree: acts(),
  versioning: acts('type "", trashcan, simple, staggered or external; fsType basic'),
  copiers: refused(noTuning),
  pullerMaxPendingKiB: refused(noTuning),
  hashers: refused(noTuning),
  order: acts(),
  ignoreDelete: acts(),
  scanProgressIntervalS: acts('0: every 2 s; negative: none'),
  pullerPauseS: acts('0: 60 s'),
  maxConflicts: acts(),
  disableSparseFiles: acts('syncd writes no sparse files, which both values allow'),
  disableTempIndexes: acts(
    'syncd sends no temporary indexes, which both values allow; devices are told the value',
  ),
  paused: acts(),
  weakHashThresholdPct: refused('syncd does not look for shifted blocks by weak hash'),
  markerName: acts(),
  copyOwnershipFromParent: refused('syncd does not copy ownership'),
  modTimeWindowS: acts(),
  maxConcurrentWrites: refused(noTuning),
  disableFsync: refused('syncd always syncs what it writes'),
  blockPullOrder: refused('syncd pulls blocks in the standard order'),
  copyRangeMethod: refused('syncd copies blocks with reads and writes (standard)'),
  caseSensitiveFS: acts(),
  junctionsAsDirs: stored('Windows only, in Syncthing too'),
};

export const FOLDER_DEVICE_FIELDS: Table<typeof FOLDER_DEVICE> = {
  deviceID: acts(),
  introducedBy: acts('the introducer that shared the folder with the device'),
  encryptionPassword: refused('syncd does not share encrypted folders'),
};

export const DEVICE_FIELDS: Table<typeof DEVICE_DEFAULTS> = {
  deviceID: acts(),
  name: acts(),
  addresses: acts('tcp:// and relay:// addresses, and "dynamic"'),
  compression: acts(),
  certName: acts(),
  introducer: acts('only for folders shared with the introducer'),
  skipIntroductionRemovals: acts(),
  introducedBy: acts(),
  paused: acts(),
  allowedNetworks: acts('networks (CIDR, ! to refuse one) the device may connect from and is dialed at'),
  autoAcceptFolders: acts('under defaults.folder.path, which must be set; not encrypted folders'),
  maxSendKbps: acts('KiB/s, as Syncthing reads it; 0: none'),
  maxRecvKbps: acts('KiB/s, as Syncthing reads it; 0: none'),
  ignoredFolders: acts(),
  maxRequestKiB: refused(noTuning),
  untrusted: refused('syncd does not share encrypted folders'),
  remoteGUIPort: stored("used by Syncthing's GUI for a link to the device's own GUI"),
};

export const GUI_FIELDS: Table<typeof GUI_DEFAULTS> = {
  enabled: acts('only true: syncd always serves its REST interface'),
  address: acts(),
  unixSocketPermissions: acts('only empty: syncd listens on TCP'),
  user: acts('the web GUI login; empty: no login, the GUI answers this machine only'),
  password: acts('a bcrypt hash; a password given in plain text through the REST API is hashed'),
  authMode: fixed('"static": gui.user and gui.password; syncd has no LDAP'),
  useTLS: acts(),
  apiKey: acts(),
  insecureAdminAccess: refused('without a GUI password the GUI answers this machine only'),
  theme: acts(
    "the theme folder of --gui-assets served first; syncd's own GUI follows the system's light or dark",
  ),
  debugging: acts('/rest/debug: file, peerCompletion, cpuprof, heapprof (V8 formats)'),
  insecureSkipHostcheck: refused('the Host check is set with --allowed-hosts'),
  insecureAllowFrameLoading: acts("the GUI's pages go without X-Frame-Options: SAMEORIGIN"),
};

export const LDAP_FIELDS: Table<typeof LDAP_DEFAULTS> = {
  address: refused(noLdap),
  bindDN: refused(noLdap),
  transport: refused(noLdap),
  insecureSkipVerify: refused(noLdap),
  searchBaseDN: refused(noLdap),
  searchFilter: refused(noLdap),
};

export const OPTIONS_FIELDS: Table<typeof OPTIONS_DEFAULTS> = {
  listenAddresses: acts('tcp://, relay:// and dynamic+https:// (relay pool) addresses; not QUIC'),
  globalAnnounceServers: acts(),
  globalAnnounceEnabled: acts(),
  localAnnounceEnabled: acts(),
  localAnnouncePort: acts(),
  localAnnounceMCAddr: acts(),
  maxSendKbps: acts('KiB/s for all devices together, as Syncthing reads it; 0: none'),
  maxRecvKbps: acts('KiB/s for all devices together, as Syncthing reads it; 0: none'),
  reconnectionIntervalS: acts(),
  relaysEnabled: acts('off by default in syncd'),
  relayReconnectIntervalM: acts(),
  startBrowser: refused('syncd opens no browser'),
  natEnabled: refused(noNat),
  natLeaseMinutes: refused(noNat),
  natRenewalMinutes: refused(noNat),
  natTimeoutSeconds: refused(noNat),
  urAccepted: refused(noReports),
  urSeen: stored("what Syncthing's GUI last showed of usage reporting"),
  urUniqueId: refused(noReports),
  urURL: refused(noReports),
  urPostInsecurely: refused(noReports),
  urInitialDelayS: refused(noReports),
  restartOnWakeup: acts(),
  autoUpgradeIntervalH: refused(noUpgrades),
  upgradeToPreReleases: refused(noUpgrades),
  keepTemporariesH: acts(),
  cacheIgnoredFiles: refused(noTuning),
  progressUpdateIntervalS: acts(),
  limitBandwidthInLan: acts('the LAN as Syncthing 1.19 has it: loopback, alwaysLocalNets, own subnets'),
  minHomeDiskFree: acts(),
  releasesURL: refused(noUpgrades),
  alwaysLocalNets: acts('networks (CIDR) counted as the LAN for limitBandwidthInLan'),
  overwriteRemoteDeviceNamesOnConnect: acts(),
  tempIndexMinBlocks: refused('syncd sends no temporary indexes'),
  unackedNotificationIDs: stored("the notifications Syncthing's GUI has yet to show"),
  trafficClass: refused("Node.js cannot set a socket's traffic class (IP_TOS)"),
  setLowPriority: acts(),
  maxFolderConcurrency: acts('0: as many as CPUs; negative: no limit'),
  crURL: refused(noReports),
  crashReportingEnabled: refused(noReports),
  stunKeepaliveStartS: refused(noNat),
  stunKeepaliveMinS: refused(noNat),
  stunServers: refused(noNat),
  databaseTuning: refused(noTuning),
  maxConcurrentIncomingRequestKiB: acts(),
  announceLANAddresses: acts('false: global discovery announces no LAN address; local discovery all'),
  sendFullIndexOnUpgrade: refused(noUpgrades),
  featureFlags: refused('syncd has no feature flags'),
  connectionLimitEnough: acts('no device dialed once this many are connected; 0: no limit'),
  connectionLimitMax: acts('connections past this many refused after the Hello; 0: no limit'),
  insecureAllowOldTLSVersions: fixed('syncd speaks TLS 1.3 only, as Syncthing by default'),
};

/** Each section's fields, with the value a refused field must keep, by the name the docs give it. */
export const SECTIONS = [
  { name: 'folders[]', fields: FOLDER_FIELDS, defaults: FOLDER_DEFAULTS },
  { name: 'folders[].devices[]', fields: FOLDER_DEVICE_FIELDS, defaults: FOLDER_DEVICE },
  { name: 'devices[]', fields: DEVICE_FIELDS, defaults: DEVICE_DEFAULTS },
  { name: 'gui', fields: GUI_FIELDS, defaults: GUI_DEFAULTS },
  { name: 'ldap', fields: LDAP_FIELDS, defaults: LDAP_DEFAULTS },
  { name: 'options', fields: OPTIONS_FIELDS, defaults: OPTIONS_DEFAULTS },
] as const;

/**
 * Refuses a configuration where a `fixed` or `refused` field differs from its default: a ConfigProblem
 * naming the first such field and saying why. The defaults for new folders and devices are checked as
 * folders and devices are.
 */
export function checkFieldStatus(config: Configuration): void {
  const check = <T extends object>(value: T, table: Table<T>, defaults: T, at: string) => {
    for (const [key, status] of Object.entries(table) as Array<[keyof T & string, FieldStatus]>) {
      if (status.status !== 'fixed' && status.status !== 'refused') continue;
      const differs = difference(value[key], defaults[key], `${at}.${key}`);
      if (!differs) continue;
      const kept = JSON.stringify(differs.kept);
      throw new ConfigProblem(
        differs.at,
        status.status === 'fixed'
          ? `${status.why}: this field must keep its default, ${kept} (see docs/configuration.md)`
          : `syncd does not act on this field (${status.why}): it must keep its default, ${kept} (see docs/configuration.md)`,
      );
    }
  };
  const folder = (value: FolderConfiguration, at: string) => {
    check(value, FOLDER_FIELDS, FOLDER_DEFAULTS, at);
    value.devices.forEach((shared, j) =>
      check(shared, FOLDER_DEVICE_FIELDS, FOLDER_DEVICE, `${at}.devices[${j}]`),
    );
  };
  config.folders.forEach((value, i) => folder(value, `folders[${i}]`));
  folder(config.defaults.folder, 'defaults.folder');
  config.devices.forEach((value, i) => check(value, DEVICE_FIELDS, DEVICE_DEFAULTS, `devices[${i}]`));
  check(config.defaults.device, DEVICE_FIELDS, DEVICE_DEFAULTS, 'defaults.device');
  check(config.gui, GUI_FIELDS, GUI_DEFAULTS, 'gui');
  check(config.ldap, LDAP_FIELDS, LDAP_DEFAULTS, 'ldap');
  check(config.options, OPTIONS_FIELDS, OPTIONS_DEFAULTS, 'options');
}

// Where a value first differs from its default: inside an object, the field that differs (a folder's
// `versioning.type`, not all of `versioning`).
function difference(value: unknown, kept: unknown, at: string): { at: string; kept: unknown } | undefined {
  if (isDeepStrictEqual(value, kept)) return undefined;
  const sameKeys = (a: object, b: object) => isDeepStrictEqual(Object.keys(a).sort(), Object.keys(b).sort());
  if (isObject(value) && isObject(kept) && sameKeys(value, kept)) {
    for (const key of Object.keys(kept)) {
      const inner = difference(value[key], kept[key], `${at}.${key}`);
      if (inner) return inner;
    }
  }
  return { at, kept };
}
