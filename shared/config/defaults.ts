// The configuration in Syncthing 1.19's shape (config version 36), with the values a fresh Syncthing
// writes, except where syncd differs on purpose (marked). Every field a Syncthing 1.19 client sends is
// here: the shapes below are also what a request is checked against (see shape.ts), and a field not
// listed is refused.

/** Syncthing's configuration version for this shape; `GET /rest/config` answers it. */
export const SYNCTHING_CONFIG_VERSION = 36;

export const FOLDER_DEVICE = { deviceID: '', introducedBy: '', encryptionPassword: '' };

export const OBSERVED_FOLDER = { time: '', id: '', label: '' };

export const OBSERVED_DEVICE = { time: '', deviceID: '', name: '', address: '' };

export const FOLDER_DEFAULTS = {
  id: '',
  label: '',
  filesystemType: 'basic',
  // syncd: no path unless one is given, where Syncthing's default is the home folder: a folder added
  // without a path is refused, never the whole home shared by accident.
  path: '',
  type: 'sendreceive',
  devices: [] as Array<typeof FOLDER_DEVICE>,
  rescanIntervalS: 3600,
  fsWatcherEnabled: true,
  fsWatcherDelayS: 10,
  ignorePerms: false,
  autoNormalize: true,
  minDiskFree: { value: 1, unit: '%' },
  versioning: {
    type: '',
    params: {} as Record<string, string>,
    cleanupIntervalS: 3600,
    fsPath: '',
    fsType: 'basic',
  },
  copiers: 0,
  pullerMaxPendingKiB: 0,
  hashers: 0,
  order: 'random',
  ignoreDelete: false,
  scanProgressIntervalS: 0,
  pullerPauseS: 0,
  maxConflicts: 10,
  disableSparseFiles: false,
  disableTempIndexes: false,
  paused: false,
  weakHashThresholdPct: 25,
  markerName: '.stfolder',
  copyOwnershipFromParent: false,
  modTimeWindowS: 0,
  maxConcurrentWrites: 2,
  disableFsync: false,
  blockPullOrder: 'standard',
  copyRangeMethod: 'standard',
  caseSensitiveFS: false,
  junctionsAsDirs: false,
};

export const DEVICE_DEFAULTS = {
  deviceID: '',
  name: '',
  addresses: ['dynamic'] as string[],
  compression: 'metadata',
  certName: '',
  introducer: false,
  skipIntroductionRemovals: false,
  introducedBy: '',
  paused: false,
  allowedNetworks: [] as string[],
  autoAcceptFolders: false,
  maxSendKbps: 0,
  maxRecvKbps: 0,
  ignoredFolders: [] as Array<typeof OBSERVED_FOLDER>,
  maxRequestKiB: 0,
  untrusted: false,
  remoteGUIPort: 0,
};

export const GUI_DEFAULTS = {
  enabled: true,
  address: '127.0.0.1:8384',
  unixSocketPermissions: '',
  user: '',
  password: '',
  authMode: 'static',
  useTLS: false,
  apiKey: '',
  insecureAdminAccess: false,
  theme: 'default',
  debugging: false,
  insecureSkipHostcheck: false,
  insecureAllowFrameLoading: false,
};

export const LDAP_DEFAULTS = {
  address: '',
  bindDN: '',
  transport: 'plain',
  insecureSkipVerify: false,
  searchBaseDN: '',
  searchFilter: '',
};

export const OPTIONS_DEFAULTS = {
  // syncd: TCP on the standard port, where Syncthing's `default` adds QUIC and relays it does not speak.
  listenAddresses: ['tcp://0.0.0.0:22000'] as string[],
  globalAnnounceServers: ['default'] as string[],
  // syncd: discovery is opt-in (--global-announce, --local-announce), where Syncthing announces at once.
  globalAnnounceEnabled: false,
  localAnnounceEnabled: false,
  localAnnouncePort: 21027,
  localAnnounceMCAddr: '[ff12::8384]:21027',
  maxSendKbps: 0,
  maxRecvKbps: 0,
  reconnectionIntervalS: 60,
  // syncd: no relays, no NAT traversal, no usage reports, no upgrades, no browser, no crash reports.
  relaysEnabled: false,
  relayReconnectIntervalM: 10,
  startBrowser: false,
  natEnabled: false,
  natLeaseMinutes: 60,
  natRenewalMinutes: 30,
  natTimeoutSeconds: 10,
  urAccepted: -1,
  urSeen: 0,
  urUniqueId: '',
  urURL: 'https://data.syncthing.net/newdata',
  urPostInsecurely: false,
  urInitialDelayS: 1800,
  restartOnWakeup: true,
  autoUpgradeIntervalH: 0,
  upgradeToPreReleases: false,
  keepTemporariesH: 24,
  cacheIgnoredFiles: false,
  progressUpdateIntervalS: 5,
  limitBandwidthInLan: false,
  minHomeDiskFree: { value: 1, unit: '%' },
  releasesURL: 'https://upgrades.syncthing.net/meta.json',
  alwaysLocalNets: [] as string[],
  overwriteRemoteDeviceNamesOnConnect: false,
  tempIndexMinBlocks: 10,
  unackedNotificationIDs: [] as string[],
  trafficClass: 0,
  setLowPriority: true,
  maxFolderConcurrency: 0,
  crURL: 'https://crash.syncthing.net/newcrash',
  crashReportingEnabled: false,
  stunKeepaliveStartS: 180,
  stunKeepaliveMinS: 20,
  stunServers: ['default'] as string[],
  databaseTuning: 'auto',
  maxConcurrentIncomingRequestKiB: 0,
  announceLANAddresses: true,
  sendFullIndexOnUpgrade: false,
  featureFlags: [] as string[],
  connectionLimitEnough: 0,
  connectionLimitMax: 0,
  insecureAllowOldTLSVersions: false,
};

export const IGNORES_DEFAULTS = { lines: [] as string[] };

export type FolderDevice = typeof FOLDER_DEVICE;
export type FolderConfiguration = typeof FOLDER_DEFAULTS;
export type DeviceConfiguration = typeof DEVICE_DEFAULTS;
export type GuiConfiguration = typeof GUI_DEFAULTS;
export type LdapConfiguration = typeof LDAP_DEFAULTS;
export type OptionsConfiguration = typeof OPTIONS_DEFAULTS;
export type ObservedDevice = typeof OBSERVED_DEVICE;

export interface Configuration {
  version: number;
  folders: FolderConfiguration[];
  devices: DeviceConfiguration[];
  gui: GuiConfiguration;
  ldap: LdapConfiguration;
  options: OptionsConfiguration;
  remoteIgnoredDevices: ObservedDevice[];
  defaults: {
    folder: FolderConfiguration;
    device: DeviceConfiguration;
    ignores: typeof IGNORES_DEFAULTS;
  };
}

/** A configuration with nothing in it yet; `prepare` adds this device and fills what depends on it. */
export function emptyConfiguration(): Configuration {
  return structuredClone({
    version: SYNCTHING_CONFIG_VERSION,
    folders: [],
    devices: [],
    gui: GUI_DEFAULTS,
    ldap: LDAP_DEFAULTS,
    options: OPTIONS_DEFAULTS,
    remoteIgnoredDevices: [],
    defaults: { folder: FOLDER_DEFAULTS, device: DEVICE_DEFAULTS, ignores: IGNORES_DEFAULTS },
  });
}
