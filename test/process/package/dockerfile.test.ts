import { cp, mkdir, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import getPort from 'get-port';
import t from 'tap';
import { parse as parseYaml } from 'yaml';
import { localPrebuilds } from '../../helpers/prebuilds.ts';
import { startService } from '../../helpers/service.ts';
import { parseDuration } from '../../../shared/duration.ts';
import { packageRoot } from '../../../shared/paths.ts';
import { settingSpecs } from '../../../shared/settings.ts';

// npm test checks the image's promises at process level; scripts/container-check.sh builds and runs
// the image itself with podman, which takes minutes.
const root = packageRoot;
const dockerfile = await readFile(join(root, 'Dockerfile'), 'utf8');
const runtimeStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
const healthcheckLine = /^HEALTHCHECK (.*) CMD (\[.*\])$/m.exec(runtimeStage);
const healthcheckCommand = JSON.parse(healthcheckLine?.[2] ?? '[]') as string[];
/** Where `syncd` is put on the PATH, and the file it links to. */
const linked = /ln -s (\/app\/\S+) (\/usr\/local\/bin\/syncd)\b/.exec(runtimeStage);

t.test(
  'the runtime stage is a slim Node LTS base, as a non-root user, with the settings the issue names',
  async (t) => {
    t.match(runtimeStage, /^\nFROM node:(\d*[02468])-slim$/m, 'an even-numbered (LTS) slim Node base');
    t.match(runtimeStage, /^USER node$/m);
    t.match(runtimeStage, /SYNCD_ADDRESS=0\.0\.0\.0:8384/);
    t.match(runtimeStage, /^EXPOSE 8384 22000\/tcp$/m, 'the sync port too: devices reach it');
    t.match(runtimeStage, /^STOPSIGNAL SIGTERM$/m);
    t.same(healthcheckCommand, ['node', 'dist/scripts/healthcheck.js', '--sync'], 'the sync listeners too');
    t.match(
      runtimeStage,
      /mkdir -p \/var\/lib\/syncd \/data && chown node:node \/var\/lib\/syncd \/data/,
      "the state and the data's mount points are the node user's: a named volume starts as theirs",
    );
    t.same(linked?.slice(1), ['/app/dist/bin/syncd.js', '/usr/local/bin/syncd'], 'syncd on the PATH');

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
    // The HEALTHCHECK's command, and `syncd status` through the link on the PATH, as `docker exec` runs it.
    const [checker, ...checkArgs] = healthcheckCommand;
    const check = await execa(checker ?? 'false', checkArgs, { cwd: app, env, reject: false });
    t.equal(check.exitCode, 0, `${check.stdout}${check.stderr}`);
    t.match(check.stdout, /listening for devices at tcp:/);
    const bin = join(app, 'usr-local-bin');
    await mkdir(bin);
    await symlink(join(app, (linked?.[1] ?? '').replace(/^\/app\//, '')), join(bin, 'syncd'));
    const status = await execa('syncd', ['status'], {
      cwd: '/',
      env: { ...env, PATH: `${bin}:${process.env.PATH}` },
      reject: false,
    });
    t.equal(status.exitCode, 0, status.stderr);
    t.match(status.stdout, /^sync {2,}tcp:\/\/127\.0\.0\.1:\d+/m);
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

t.test('compose.yaml runs the image as the Dockerfile makes it', async (t) => {
  const compose = parseYaml(await readFile(join(root, 'compose.yaml'), 'utf8')) as {
    services: Record<string, Record<string, unknown>>;
    volumes: Record<string, unknown>;
  };
  const service = compose.services.syncd ?? {};
  t.equal(service.build, '.', 'built from this Dockerfile');
  t.equal(service.user, '1000:1000', "the image's node user, written out");
  t.match(service.restart, /^(always|unless-stopped)$/);

  // Each port the image exposes is published at the same number.
  const exposed = /^EXPOSE (.*)$/m.exec(runtimeStage)?.[1]?.split(' ') ?? [];
  const published = (service.ports as string[]).map((port) => port.split(':').slice(-2));
  t.same(published.map(([, container]) => `${container}`).sort(), [...exposed].sort(), 'every exposed port');
  t.ok(
    published.every(([host, container]) => host === container?.replace(/\/tcp$/, '')),
    'at the same port',
  );

  // The state where SYNCD_HOME and VOLUME say, the data where the image made /data; named volumes.
  const home = /SYNCD_HOME=(\S+)/.exec(runtimeStage)?.[1];
  t.match(runtimeStage, new RegExp(`^VOLUME ${home}$`, 'm'));
  const mounts = Object.fromEntries(
    (service.volumes as string[]).map((volume) => volume.split(':').reverse() as [string, string]),
  );
  t.same(Object.keys(mounts).sort(), ['/data', home].sort());
  t.same(Object.keys(compose.volumes).sort(), Object.values(mounts).sort(), 'both volumes declared');

  // The image's health check, at its intervals; a stop that leaves the drain timeout room.
  const healthcheck = service.healthcheck as Record<string, unknown>;
  t.same(healthcheck.test, ['CMD', ...healthcheckCommand]);
  for (const option of ['interval', 'timeout', 'start_period', 'retries']) {
    const flag = new RegExp(`--${option.replace('_', '-')}=(\\S+)`).exec(healthcheckLine?.[1] ?? '')?.[1];
    t.equal(String(healthcheck[option]), flag, option);
  }
  const grace = parseDuration(String(service.stop_grace_period)) ?? 0;
  const drain = parseDuration(settingSpecs.drainTimeout.default) ?? Infinity;
  t.ok(grace >= drain + 10_000, `stop_grace_period ${grace} ms: the drain timeout (${drain} ms) and more`);
});
