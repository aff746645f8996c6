import { homedir } from 'node:os';
import { join } from 'node:path';
import { CONFIG_FILE, INDEX_FILE, LOCK_FILE } from '../../shared/home.ts';
import { DEVICE_CERT_FILE, DEVICE_KEY_FILE } from '../../shared/identity.ts';
import { TLS_CERT_FILE, TLS_KEY_FILE } from '../../shared/tls.ts';

/**
 * The files syncd keeps, under Syncthing 2.x's names for them (lib/locations, GET
 * /rest/system/paths). syncd logs to standard output and keeps no panic or audit log: those are
 * empty, as Syncthing answers for a location it does not use.
 */
export function homePaths(home: string, guiAssets?: string): Record<string, string> {
  return {
    'baseDir-config': home,
    'baseDir-data': home,
    'baseDir-userHome': homedir(),
    config: join(home, CONFIG_FILE),
    certFile: join(home, DEVICE_CERT_FILE),
    keyFile: join(home, DEVICE_KEY_FILE),
    httpsCertFile: join(home, TLS_CERT_FILE),
    httpsKeyFile: join(home, TLS_KEY_FILE),
    database: join(home, INDEX_FILE),
    logFile: '-',
    panicLog: '',
    auditLog: '',
    guiAssets: guiAssets ?? '',
    lockFile: join(home, LOCK_FILE),
  };
}
