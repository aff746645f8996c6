import { readdir, readFile } from 'node:fs/promises';
import t from 'tap';
import { commandHelp } from '../scripts/cli/usage.ts';
import { settingSpecs } from '../shared/settings.ts';
import { buildApp } from '../worker/http/app.ts';
import { EventLog } from '../worker/events/event-log.ts';
import { appOptions } from './helpers/app.ts';
import { localConfig } from './helpers/config.ts';

// "A feature without its docs is not finished": these fail when one is missing from the README and
// the pages of docs/, its folders' included (read together as one text).
const docs = new URL('../docs/', import.meta.url);
const readme = [
  await readFile(new URL('../README.md', import.meta.url), 'utf8'),
  ...(await Promise.all(
    (await readdir(docs, { recursive: true }))
      // The performance notes are a diary, not the reference: what they say documents nothing.
      .filter((name) => name.endsWith('.md') && !name.startsWith('perf-notes'))
      .map((name) => readFile(new URL(name, docs), 'utf8')),
  )),
].join('\n');

t.test('every setting is in the README, flag and environment variable', async (t) => {
  for (const spec of Object.values(settingSpecs)) {
    t.match(readme, `--${spec.flag}`, spec.flag);
    t.match(readme, spec.env, spec.env);
  }
});

t.test('every endpoint is in the README with a curl example', async (t) => {
  const routes: Array<{ method: string; url: string }> = [];
  const app = buildApp(
    appOptions({ config: localConfig().config, events: new EventLog(), model: () => undefined }),
  );
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat())
      if (method !== 'HEAD') routes.push({ method, url: route.url });
  });
  await app.ready();
  t.teardown(() => app.close());
  t.ok(routes.length >= 10, `${routes.length} routes`);
  for (const { method, url } of routes) {
    // A parameter (`:id`) stands for any value the example gives.
    const path = url.replace(/\//g, '\\/').replace(/:[a-z]+/gi, '[^\\s/\'"?]+');
    const curl = new RegExp(
      `curl [^\\n]*${method === 'GET' ? '' : `-X ${method} `}[^\\n]*\\$ADDR${path}(?![\\w/-])`,
    );
    t.match(readme, curl, `${method} ${url}`);
  }
});

t.test('every command of syncd and every exit code of the supervisor is in the README', async (t) => {
  for (const command of Object.keys(commandHelp)) t.match(readme, `syncd ${command}`, command);
  for (const code of [0, 1, 2, 3]) t.match(readme, new RegExp(`^\\| ${code} +\\|`, 'm'), `exit code ${code}`);
});
