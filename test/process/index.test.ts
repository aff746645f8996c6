// The index with real processes: it changes hands at a restart, and a worker killed in the middle of a
// scan leaves an index that opens and is completed by the next scan.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { call, startService, waitFor } from '../helpers/service.ts';

const FILES = 3000;

t.test('a worker killed mid-scan leaves an index that opens, and its successor completes it', async (t) => {
  const home = t.testdir();
  const data = join(home, 'data');
  for (let dir = 0; dir < 30; dir++) {
    await mkdir(join(data, `d${dir}`), { recursive: true });
    for (let file = 0; file < FILES / 30; file++) {
      await writeFile(join(data, `d${dir}`, `f${file}`), `${dir}/${file} `.repeat(2000));
    }
  }
  const service = await startService(t, { home: join(home, 'syncd') });
  const add = await call(service, 'POST', '/rest/config/folders', {
    body: JSON.stringify({ id: 'f', path: data }),
  });
  t.equal(add.status, 200);
  const first = await service.workerPid();
  const scanning = await waitFor('the scan under way', async () => {
    const status = (await call(service, 'GET', '/rest/db/status?folder=f')).body;
    return status.state === 'scanning' && status.localFiles > 0 ? status : undefined;
  });
  process.kill(first, 'SIGKILL');
  t.ok(scanning.localFiles < FILES, `killed with ${scanning.localFiles} of ${FILES} files indexed`);
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
