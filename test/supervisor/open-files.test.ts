import t from 'tap';
import {
  DESCRIPTORS_BESIDE_CONNECTIONS,
  fitConnections,
  openFileLimit,
} from '../../supervisor/open-files.ts';

t.test('connections within the open-file limit are kept as they are', async (t) => {
  t.same(fitConnections(1000, false, 65_536), { maxConnections: 1000 });
  t.same(fitConnections(1000, true, undefined), { maxConnections: 1000 }, 'no limit known: nothing to check');
});

t.test('the default is lowered to fit a low limit, with a warning that says how to raise it', async (t) => {
  const fitted = fitConnections(1000, false, 512);
  t.equal(fitted.maxConnections, 512 - DESCRIPTORS_BESIDE_CONNECTIONS);
  t.match(
    fitted.warning,
    /serving at most 412 connections instead of 1000: .* only 512 files; raise the limit \(ulimit -n/,
  );
});

t.test('a number given above the limit stops the supervisor, naming both', async (t) => {
  t.throws(() => fitConnections(1000, true, 512), {
    name: 'SettingError',
    message:
      /--max-connections \/ SYNCD_MAX_CONNECTIONS: 1000 connections need 1100 open files, but this process may open only 512: .*lower it to 412/,
  });
});

t.test("this process's limit is read where the system tells it", async (t) => {
  const limit = await openFileLimit();
  if (process.platform === 'linux') t.ok(limit !== undefined && limit > 0, `limit ${limit}`);
  else t.equal(limit, undefined);
});
