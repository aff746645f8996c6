// A filesystem that never answers, as a network share whose server is gone: a FUSE mount whose server
// (this process, holding /dev/fuse) reads nothing, so every call on it waits in the kernel. Ending it
// aborts the connection: the calls waiting, and every later one, fail with ENOTCONN.
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import './teardown-first.ts';
import type { Teardown } from './teardown-first.ts';

export interface DeadMount {
  /** Aborts the mount's connection: what waits on it fails with ENOTCONN, as does what comes after. */
  end(): void;
  /** Ends it and takes it away: the directory shows what it held before the mount. */
  remove(): Promise<void>;
}

/** Why a dead mount cannot be made here (not root, no FUSE, mounting refused), or undefined. */
export async function deadMountUnavailable(): Promise<string | undefined> {
  if (process.platform !== 'linux') return 'FUSE mounts are made here on Linux only';
  if (process.getuid?.() !== 0) return 'mounting needs root (.ci/run runs as root)';
  const dir = await mkdtemp(join(tmpdir(), 'syncd-fuse-'));
  try {
    const mount = await deadMount({ teardown: () => {} }, dir);
    await mount.remove();
    return undefined;
  } catch (error) {
    return `no FUSE mount here: ${(error as Error).message}`;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Mounts a filesystem that never answers over the directory `at`; ended and unmounted in teardown. */
export async function deadMount(t: Teardown, at: string): Promise<DeadMount> {
  let fd: number | undefined = openSync('/dev/fuse', 'r+');
  const end = () => {
    if (fd !== undefined) closeSync(fd);
    fd = undefined;
  };
  let mounted = false;
  // Detached first, then ended: what waited on it fails, and what comes after finds the directory.
  const remove = async () => {
    if (mounted) await execa('umount', ['-l', at]);
    mounted = false;
    end();
  };
  t.teardown(remove);
  try {
    // -i: no mount.fuse helper, which would want a server program; the kernel takes the descriptor.
    await run(
      'mount',
      ['-i', '-t', 'fuse', '-o', 'fd=3,rootmode=40000,user_id=0,group_id=0', 'dead', at],
      fd,
    );
    mounted = true;
  } catch (error) {
    end();
    throw error;
  }
  return { end, remove };
}

// A command given the descriptor `fd` as its 3 (execa's types take no descriptor past the third).
function run(command: string, args: string[], fd: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe', fd] });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`${command} exited with ${code}: ${stderr.trim()}`)),
    );
  });
}
