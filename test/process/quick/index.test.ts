// The index with real processes: it changes hands at a restart, and a worker killed in the middle of a
// scan leaves an index that opens and is completed by the next scan.
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { runCli } from '../../../scripts/cli/run.ts';
import { call, startService, waitFor } from '../../helpers/service.ts';

// Enough to take a good part of a second to index: the worker is killed after the first batch of 500.
const FILES = 3000;

t.test('a worker killed mid-scan leaves an index that opens, and its successor completes it', async (t) => {
  const home = t.testdir();
  const data = join(home, 'data');
  for (let dir = 0; dir < 30; dir++) {
    await mkdir(join(data, `d${dir}`), { recursive: true });
    for (let file = 0; file < FILES / 30; file++) {
      await writeFile(join(data, `d${dir}`, `f${file}`), `${dir}/${file} `.repeat(4000));
    }
  }
  const service = await startService(t, { home: join(home, 'syncd') });
  const first = await service.workerPid();
  // The first batch written is the moment: a long poll on a subscription made before the folder.
  const events = '/rest/events?events=LocalIndexUpdated,StateChanged';
  await call(service, 'GET', `${events}&timeout=0`);
  const add = await call(service, 'POST', '/rest/config/folders', {
    body: JSON.stringify({ id: 'f', path: data }),
  });
  t.equal(add.status, 200);
  const written = await waitFor('the first batch written', async () => {
    const batch = (
      (await call(service, 'GET', `${events}&since=0&timeout=10`)).body as Array<{
        type: string;
        data: { sequence?: number; to?: string };
      }>
    ).find((event) => event.type === 'LocalIndexUpdated');
    return batch?.data;
  });
  process.kill(first, 'SIGKILL');
  t.ok((written.sequence ?? 0) < FILES, `killed once ${written.sequence} of ${FILES} files were indexed`);
  const successor = (
    await service.waitForLog((line) => line.msg === 'service held' && line.workerPid !== first, 30_000)
  ).workerPid;
  const done = await waitFor(
    'the index completed by the next worker',
    async () => {
      const answer = await call(service, 'GET', '/rest/db/status?folder=f');
      return answer.status === 200 && answer.body.state === 'idle' && answer.body.localFiles === FILES
        ? answer.body
        : undefined;
    },
    60_000,
  );
  t.match(done, { localFiles: FILES, localDirectories: 30, localDeleted: 0, errors: 0 });
  t.ok(done.sequence >= FILES + 30, `sequence ${done.sequence}`);

  // A restart hands the index over: the new worker opens it, and finds nothing changed.
  const before = done.sequence;
  await call(service, 'POST', '/rest/system/restart');
  const second = await service.waitForLog(
    (line) => line.msg === 'service held' && line.workerPid !== successor && line.workerPid !== first,
    30_000,
  );
  t.ok(second.workerPid, 'held by a new worker');
  const after = await waitFor('the index served again', async () => {
    const answer = await call(service, 'GET', '/rest/db/status?folder=f');
    return answer.status === 200 && answer.body.state === 'idle' ? answer.body : undefined;
  });
  t.equal(after.sequence, before, 'the same index, nothing rescanned as changed');
});

t.test(
  'a reset answers first, then a new worker rebuilds the index with a new index ID; no file is touched',
  async (t) => {
    const home = t.testdir({ data: { 'a.txt': 'a', sub: { 'b.txt': 'b' } }, other: { 'c.txt': 'c' } });
    const syncdHome = join(home, 'syncd');
    const service = await startService(t, { home: syncdHome });
    for (const [id, path] of [
      ['f', join(home, 'data')],
      ['g', join(home, 'other')],
    ]) {
      t.equal(
        (await call(service, 'POST', '/rest/config/folders', { body: JSON.stringify({ id, path }) })).status,
        200,
      );
    }
    const idle = (id: string) =>
      waitFor(`folder ${id} idle`, async () => {
        const answer = await call(service, 'GET', `/rest/db/status?folder=${id}`);
        return answer.status === 200 && answer.body.state === 'idle' && answer.body.localFiles > 0
          ? answer.body
          : undefined;
      });
    await idle('f');
    await idle('g');
    const indexIds = () => {
      const db = new Database(join(syncdHome, 'index.sqlite'), { readonly: true });
      try {
        return Object.fromEntries(
          (
            db.prepare('SELECT folder, index_id FROM folders').all() as Array<{
              folder: string;
              index_id: string;
            }>
          ).map((row) => [row.folder, row.index_id]),
        );
      } finally {
        db.close();
      }
    };
    const before = indexIds();
    const file = join(home, 'data', 'sub', 'b.txt');
    const stamp = (await stat(file)).mtimeMs;

    t.equal((await call(service, 'POST', '/rest/system/reset?folder=nope')).status, 404);
    const env = { SYNCD_ADDRESS: service.address, SYNCD_API_KEY: service.apiKey, SYNCD_HOME: '/nonexistent' };
    const out: string[] = [];
    const code = await runCli(['reset', 'f', '--wait', '--timeout', '60s'], {
      env,
      out: (s) => out.push(s),
      err: (s) => out.push(s),
    });
    t.equal(code, 0, out.join('\n'));
    t.match(out.join('\n'), /^f indexed anew in \d+ ms$/);
    const after = indexIds();
    t.not(after.f, before.f, 'folder f has a new index ID');
    t.equal(after.g, before.g, 'folder g is untouched');
    t.match((await call(service, 'GET', '/rest/db/status?folder=f')).body, {
      localFiles: 2,
      localDirectories: 1,
    });
    t.equal(await readFile(file, 'utf8'), 'b', 'the file is as it was');
    t.equal((await stat(file)).mtimeMs, stamp);

    const all = await call(service, 'POST', '/rest/system/reset');
    t.same(all.body, { ok: 'resetting database' });
    await service.waitForLog((line) => line.msg === 'index reset: every folder is indexed anew', 30_000);
    await idle('g');
    t.not(indexIds().g, before.g, 'every folder anew');
  },
);
