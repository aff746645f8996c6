// Discovery between syncd and a real Syncthing 1.19, each in a network namespace of its own joined by
// a veth pair (local discovery needs an interface with a broadcast address, and the discovery server
// refuses loopback addresses): the scenario runs inside the first namespace (see
// test/fixtures/discovery-in-namespaces.ts), and the namespaces are removed, with whatever still runs
// in them, when the test ends.
import { join } from 'node:path';
import t from 'tap';
import { makeNamespaces, namespacesUnavailable } from '../helpers/netns.ts';
import { hasSyncthing, NO_SYNCTHING } from '../helpers/syncthing.ts';
import { execa } from 'execa';

const noNamespaces = await namespacesUnavailable();
const hasDiscoveryServer =
  (await execa('sh', ['-c', 'command -v stdiscosrv'], { reject: false })).exitCode === 0;
const fixture = join(import.meta.dirname, '..', 'fixtures', 'discovery-in-namespaces.ts');

for (const mode of ['local', 'global'] as const) {
  const skip = !hasSyncthing
    ? NO_SYNCTHING
    : noNamespaces
      ? noNamespaces
      : mode === 'global' && !hasDiscoveryServer
        ? 'stdiscosrv is not installed (apt-get install syncthing-discosrv; .ci/run does it)'
        : false;
  t.test(`${mode} discovery, in network namespaces`, { skip }, async (t) => {
    const namespaces = await makeNamespaces(t, 2);
    await t.spawn(
      namespaces.exec(0)[0] as string,
      [...namespaces.exec(0).slice(1), process.execPath, '--import', 'tsx', fixture, mode],
      { env: { ...process.env, SYNCD_TEST_NETNS: namespaces.names.join(',') }, timeout: 150_000 },
      `the ${mode} scenario, inside ${namespaces.names[0]}`,
    );
  });
}
