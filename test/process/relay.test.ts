// Relays between syncd and a real Syncthing 1.19 through Syncthing's relay server (strelaysrv), in
// network namespaces where the two cannot reach each other directly: the scenario runs inside the
// first namespace (see test/fixtures/relay-in-namespaces.ts), and the namespaces are removed, with
// whatever still runs in them, when the test ends.
import { join } from 'node:path';
import t from 'tap';
import { makeNamespaces, namespacesUnavailable } from '../helpers/netns.ts';
import { NO_RELAY_SERVER } from '../helpers/relay-server.ts';
import { hasSyncthing, NO_SYNCTHING } from '../helpers/syncthing.ts';

const noNamespaces = await namespacesUnavailable();
const fixture = join(import.meta.dirname, '..', 'fixtures', 'relay-in-namespaces.ts');
const skip = !hasSyncthing ? NO_SYNCTHING : (noNamespaces ?? NO_RELAY_SERVER ?? false);

t.test('relayed connections, in network namespaces', { skip }, async (t) => {
  const namespaces = await makeNamespaces(t, 2);
  await t.spawn(
    namespaces.exec(0)[0] as string,
    [...namespaces.exec(0).slice(1), process.execPath, '--import', 'tsx', fixture],
    { env: { ...process.env, SYNCD_TEST_NETNS: namespaces.names.join(',') }, timeout: 150_000 },
    `the relay scenario, inside ${namespaces.names[0]}`,
  );
});
