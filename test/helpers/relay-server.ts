// Syncthing's relay server (strelaysrv, Debian's syncthing-relaysrv) for the relay tests: private (no
// pool, no status server), with a certificate of our making so that its ID is known, killed and its
// folder removed in teardown.
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { connectOutcome } from '../../shared/client/poll.ts';
import { newTestDevice } from './device.ts';
import { pollUntil } from './syncthing.ts';
import type { Teardown } from './teardown-first.ts';

export const NO_RELAY_SERVER =
  (await execa('sh', ['-c', 'command -v strelaysrv'], { reject: false })).exitCode === 0
    ? undefined
    : 'strelaysrv is not installed (apt-get install syncthing-relaysrv; .ci/run does it)';

/** Starts strelaysrv listening at `listen` (HOST:PORT, or :PORT for every address): its device ID. */
export async function startRelayServer(t: Teardown, listen: string): Promise<string> {
  const relay = await newTestDevice();
  const dir = await mkdtemp(join(tmpdir(), 'syncd-test-relaysrv-'));
  await writeFile(join(dir, 'cert.pem'), relay.cert);
  await writeFile(join(dir, 'key.pem'), relay.key, { mode: 0o600 });
  const child = spawn('strelaysrv', ['-listen', listen, '-pools=', '-keys', dir, '-status-srv='], {
    stdio: 'ignore',
  });
  t.teardown(async () => {
    child.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  });
  const port = listen.slice(listen.lastIndexOf(':') + 1);
  const host = listen.startsWith(':') ? '127.0.0.1' : listen.slice(0, listen.lastIndexOf(':'));
  await pollUntil(
    'the relay server listening',
    async () => (await connectOutcome(`${host}:${port}`)) === 'connected',
  );
  return relay.id;
}
