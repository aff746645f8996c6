import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import getPort from 'get-port';
import t from 'tap';
import { localPrebuilds } from '../../helpers/prebuilds.ts';
import { startService } from '../../helpers/service.ts';
import { packageRoot } from '../../../shared/paths.ts';

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
    t.match(runtimeStage, /^EXPOSE 8384 22000\/tcp$/m, 'the sync port too: devices reach it');
    t.match(runtimeStage, /^STOPSIGNAL SIGTERM$/m);
    t.match(runtimeStage, /^HEALTHCHECK .*CMD \["node", "dist\/scripts\/healthcheck\.js"\]$/m);
    t.match(runtimeStage, /^CMD \["npm", "start", "--silent"\]$/m, 'npm start without its banner');
    t.notMatch(
      runtimeStage,
      /npm (ci|install)/,
      'no install in the runtime stage: it copies what the others made',
    );
    const deps = dockerfile.slice(dockerfile.indexOf(' AS deps'), dockerfile.lastIndexOf('\nFROM '));
    t.match(
      deps,
      /^RUN npm ci --omit=dev --ignore-scripts && npm rebuild/m,
      'the native dependencies alone, built',
    );
  },
);

t.test(
  'what the runtime stage copies is enough to serve, pass the health check and stop on SIGTERM',
  async (t) => {
    const app = await mkdtemp(join(tmpdir(), 'syncd-image-'));
    t.teardown(() => rm(app, { recursive: true, force: true }));
    const copies = [...runtimeStage.matchAll(/^COPY --from=(\w+) \/app\/(\S+) /gm)].map(
      (m) => `${m[1]}:${m[2]}`,
    );
    t.same(copies.sort(), ['build:dist', 'build:package.json', 'deps:node_modules']);
    for (const path of ['dist', 'package.json'])
      await cp(join(root, path), join(app, path), { recursive: true });
    // The deps stage, as its RUN line does it, in a folder of its own.
    const stage = await mkdtemp(join(tmpdir(), 'syncd-deps-'));
    t.teardown(() => rm(stage, { recursive: true, force: true }));
    for (const file of ['package.json', 'package-lock.json']) await cp(join(root, file), join(stage, file));
    const depsRun = /^RUN (npm ci --omit=dev.*)$/m.exec(dockerfile)?.[1] ?? 'false';
    await execa('sh', ['-c', depsRun], {
      cwd: stage,
      env: {
        NPM_CONFIG_AUDIT: 'false',
        NPM_CONFIG_FUND: 'false',
        // The native module's binary, as its installer downloads it in a real build.
        ...(await localPrebuilds(join(stage, '.prebuilds'))),
      },
    });
    await cp(join(stage, 'node_modules'), join(app, 'node_modules'), { recursive: true });

    const port = await getPort();
    const env = {
      SYNCD_ADDRESS: `0.0.0.0:${port}`,
      SYNCD_SYNC_ADDRESS: 'tcp://127.0.0.1:0',
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
