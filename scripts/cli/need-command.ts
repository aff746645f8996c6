import type { NeededFile, SyncdClient } from '../../shared/client/client.ts';
import { ConfigUsageError } from './config-commands.ts';
import { inSyncPercent } from './folder-list.ts';
import { localTime, type Print } from './format.ts';
import { bytes, counted } from './traffic.ts';
import { safeLine } from '../../shared/terminal-text.ts';

/** Items listed at most: the counts say how many more there are. */
const SHOWN = 100;

/**
 * `syncd need FOLDER`: what the folder lacks of the global versions (for a send-only folder, what
 * differs: an override gives it up), its items that failed, and a receive-only folder's local changes.
 */
export async function needCommand(client: SyncdClient, args: string[], print: Print): Promise<void> {
  const [folder, ...rest] = args;
  if (folder === undefined || folder === '') throw new ConfigUsageError('need needs the FOLDER');
  if (rest.length > 0) throw new ConfigUsageError(`need takes one FOLDER, got "${args.join(' ')}"`);
  const [status, need, changed, config] = await Promise.all([
    client.folderStatus(folder),
    client.need(folder, 1, SHOWN),
    client.localChanged(folder, 1, SHOWN),
    client.folders().then((folders) => folders.find((entry) => entry.id === folder)),
  ]);
  const needed = [...need.progress, ...need.queued, ...need.rest];
  const lines: string[] = [];
  if (needed.length === 0) lines.push(`folder ${folder} needs nothing: ${status.state}`);
  else {
    const what =
      config?.type === 'sendonly'
        ? 'differs from the global versions (syncd folders override undoes that)'
        : `needs, ${inSyncPercent(status)}% in sync`;
    lines.push(
      `folder ${folder} ${what}: ${counted(status.needTotalItems, 'item')}, ${bytes(status.needBytes)}`,
    );
    lines.push(...need.progress.map((file) => item(file, 'being pulled')));
    lines.push(...[...need.queued, ...need.rest].map((file) => item(file)));
    if (status.needTotalItems > needed.length)
      lines.push(`  … and ${status.needTotalItems - needed.length} more`);
  }
  if (changed.files.length > 0) {
    lines.push(
      `local changes (syncd folders revert ${folder} undoes them): ${counted(status.receiveOnlyTotalItems, 'item')}`,
    );
    lines.push(...changed.files.map((file) => item(file)));
    if (status.receiveOnlyTotalItems > changed.files.length)
      lines.push(`  … and ${status.receiveOnlyTotalItems - changed.files.length} more`);
  }
  const errors = status.errors > 0 ? ((await client.folderErrors(folder)).errors ?? []) : [];
  if (errors.length > 0) {
    lines.push(`${counted(errors.length, 'item')} failed (tried again at the next pull or scan):`);
    lines.push(...errors.map(({ path, error }) => `  ${safeLine(path)}: ${safeLine(error)}`));
  }
  print({ folder, status, need, localChanged: changed, errors }, lines.join('\n'));
}

const kinds: Record<string, string> = {
  FILE_INFO_TYPE_FILE: 'file',
  FILE_INFO_TYPE_DIRECTORY: 'directory',
  FILE_INFO_TYPE_SYMLINK: 'symlink',
};

function item(file: NeededFile, now = ''): string {
  const kind = kinds[file.type] ?? file.type;
  const doing = now === '' ? '' : `, ${now}`;
  const name = safeLine(file.name);
  if (file.deleted) return `  ${name}  (${kind} deleted${doing})`;
  const size = kind === 'file' ? `, ${bytes(file.size)}` : '';
  return `  ${name}  (${kind}${size}, modified ${localTime(file.modified)}${doing})`;
}
