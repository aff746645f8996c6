import { readFileSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { SettingError, settingLabel } from '../shared/settings.ts';
import { LOCK_FILE } from '../shared/home.ts';

interface Owner {
  pid: number;
  /** When the process started, in clock ticks since boot (Linux), so that a reused pid is told apart. */
  start: string;
}

export interface HomeLock {
  /** Removes the lock, if it is still this process's. */
  release(): Promise<void>;
}

/**
 * Makes this process the one service of the home: two services on one home would overwrite each
 * other's files. A lock left by a process that is gone (killed, a container restarted with the same
 * pid given to another process) is taken over. Throws SettingError naming the live owner.
 */
export async function lockHome(home: string): Promise<HomeLock> {
  const path = join(home, LOCK_FILE);
  const me: Owner = { pid: process.pid, start: startOf(process.pid) };
  for (let attempt = 0; attempt < 20; attempt++) {
    try {
      await writeFile(path, `${JSON.stringify(me)}\n`, { flag: 'wx', mode: 0o644 });
      return { release: () => releaseIfOurs(path, me) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw new SettingError(settingLabel('home'), `cannot create ${path}: ${(error as Error).message}`, {
          cause: error,
        });
      }
    }
    const owner = await readOwner(path);
    if (owner === 'unreadable') {
      // Another start is writing it this very moment; a lock that stays unreadable is debris.
      if (attempt < 10) {
        await sleep(25);
        continue;
      }
    } else if (isRunning(owner)) {
      throw new SettingError(
        settingLabel('home'),
        `${home} is in use by another syncd (supervisor pid ${owner.pid}); stop it first, or give this one another home`,
      );
    }
    await rm(path, { force: true });
  }
  throw new SettingError(settingLabel('home'), `cannot take the lock ${path}: other starts keep taking it`);
}

async function releaseIfOurs(path: string, me: Owner): Promise<void> {
  const owner = await readOwner(path);
  if (owner !== 'unreadable' && owner.pid === me.pid && owner.start === me.start)
    await rm(path, { force: true });
}

async function readOwner(path: string): Promise<Owner | 'unreadable'> {
  try {
    const owner = JSON.parse(await readFile(path, 'utf8')) as Owner;
    return typeof owner.pid === 'number' && typeof owner.start === 'string' ? owner : 'unreadable';
  } catch {
    return 'unreadable';
  }
}

function isRunning(owner: Owner): boolean {
  try {
    process.kill(owner.pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  const start = startOf(owner.pid);
  // A zombie has ended; a process started at another time is another process with the same pid.
  return start !== 'zombie' && (owner.start === '' || start === owner.start);
}

/** Field 22 of /proc/PID/stat; 'zombie' for a process that has ended unreaped; '' where /proc is not. */
function startOf(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[0] === 'Z' ? 'zombie' : (fields[19] ?? '');
  } catch {
    return '';
  }
}
