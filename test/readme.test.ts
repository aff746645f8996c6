import { readFile } from 'node:fs/promises';
import t from 'tap';
import { commandHelp } from '../scripts/cli/usage.ts';
import { settingSpecs } from '../shared/settings.ts';
import { buildApp } from '../worker/http/app.ts';
import { appOptions } from './helpers/app.ts';

// "A feature without its line in the README is not finished": these fail when one is missing.
const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8');

t.test('every setting is in the README, flag and environment variable', async (t) => {
  for (const spec of Object.values(settingSpecs)) {
    t.match(readme, `--${spec.flag}`, spec.flag);
    t.match(readme, spec.env, spec.env);
  }
});

t.test('every endpoint is in the README with a curl example', async (t) => {
  const routes: Array<{ method: string; url: string }> = [];
  const app = buildApp(appOptions());
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat())
      if (method !== 'HEAD') routes.push({ method, url: route.url });
  });
  await app.ready();
  t.teardown(() => app.close());
  t.ok(routes.length >= 10, `${routes.length} routes`);
  for (const { method, url } of routes) {
    const curl = new RegExp(
      `curl [^\\n]*${method === 'GET' ? '' : '-X POST '}[^\\n]*\\$ADDR${url.replace(/\//g, '\\/')}\\b(?!/)`,
    );
    t.match(readme, curl, `${method} ${url}`);
  }
});

t.test('every command of syncd and every exit code of the supervisor is in the README', async (t) => {
  for (const command of Object.keys(commandHelp)) t.match(readme, `syncd ${command}`, command);
  for (const code of [0, 1, 2, 3]) t.match(readme, new RegExp(`^\\| ${code} +\\|`, 'm'), `exit code ${code}`);
});
