import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import getPort from 'get-port';
import t from 'tap';
import { startService } from '../helpers/service.ts';
import { packageRoot } from '../../shared/paths.ts';

// No container engine runs on these machines: this checks the image's promises at process level.
const root = packageRoot;
const dockerfile = await readFile(join(root, 'Dockerfile'), 'utf8');
const runtimeStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));

t.test(
  'the runtime stage is a slim Node LTS base, as a non-root user, with the settings the issue names',
  async (t) => {
    t.match(runtimeStage, /^\nFROM node:(\d*[02468])-slim$/m, 'an even-numbered (LTS) slim Node base');
    t.match(runtimeStage, /^USER node$/m);
    t.match(runtimeStage, /SYNCD_ADDRESS=0\.0\.0\.0:8384/);
    t.match(runtimeStage, /^STOPSIGNAL SIGTERM$/m);
    t.match(runtimeStage, /^HEALTHCHECK .*CMD \["node", "dist\/scripts\/healthcheck\.js"\]$/m);
    t.match(runtimeStage, /^CMD \["npm", "start", "--silent"\]$/m, 'npm start without its banner');
    t.notMatch(runtimeStage, /npm (ci|install)/, 'no install: the bundles hold the production dependencies');
  },
);

t.test(
  'what the runtime stage copies is enough to serve, pass the health check and stop on SIGTERM',
  async (t) => {
    const app = await mkdtemp(join(tmpdir(), 'syncd-image-'));
    t.teardown(() => rm(app, { recursive: true, force: true }));
    const copies = [...runtimeStage.matchAll(/^COPY --from=build \/app\/(\S+) /gm)].map(
      (m) => m[1] as string,
    );
    t.same(copies.sort(), ['dist', 'package.json']);
    for (const path of copies) await cp(join(root, path), join(app, path), { recursive: true });

    const port = await getPort();
    const env = {
      SYNCD_ADDRESS: `0.0.0.0:${port}`,
      SYNCD_HOME: join(app, 'home'),
      NPM_CONFIG_UPDATE_NOTIFIER: 'false',
    };
    const service = await startService(t, { viaNpm: true, cwd: app, env: { ...env, SYNCD_API_KEY: '' } });
    const check = await execa('node', ['dist/scripts/healthcheck.js'], { cwd: app, env, reject: false });
    t.equal(check.exitCode, 0, `${check.stdout}${check.stderr}`);
    service.process.kill('SIGTERM');
    t.equal((await service.exited).exitCode, 0);

    // What the image writes to its log: JSON lines only, as log collectors expect.
    const [, ...command] = /^CMD (.*)$/m.exec(runtimeStage)?.[1]
      ? JSON.parse(/^CMD (.*)$/m.exec(runtimeStage)?.[1] as string)
      : [];
    const run = execa('npm', command, {
      cwd: app,
      env: { ...env, SYNCD_API_KEY: 'a-key-for-the-image-log' },
      reject: false,
      buffer: false,
    });
    t.teardown(() => run.kill('SIGKILL'));
    let output = '';
    let stopped = false;
    run.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (!stopped && output.includes('"msg":"ready"')) stopped = run.kill('SIGTERM');
    });
    const result = await run;
    t.equal(result.exitCode, 0, `exit ${result.exitCode} ${result.signal}:\n${output}`);
    const lines = output.split('\n').filter((line) => line.trim() !== '');
    t.ok(lines.length >= 3, `${lines.length} lines`);
    t.same(
      lines.filter((line) => !line.startsWith('{')),
      [],
      'no banner or other text among the JSON lines',
    );
  },
);
