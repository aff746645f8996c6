// What the machine and the people around the service can get wrong: a log reader that stops reading,
// an open-file limit too low for the connections asked for, settings that cannot work.
import { execa } from 'execa';
import t from 'tap';
import { SyncdClient } from '../../../shared/client/client.ts';
import { syncdBin, waitFor } from '../../helpers/service.ts';

const apiKey = 'a-key-for-the-limits-tests';

t.test(
  'a log reader that stops reading stalls nothing; the dropped lines are counted and reported',
  async (t) => {
    // In text, which goes through pino-pretty on its way to the same output that never blocks.
    const child = execa(process.execPath, [syncdBin, 'serve', '--log-format', 'text'], {
      env: {
        SYNCD_HOME: t.testdir(),
        SYNCD_ADDRESS: '127.0.0.1:0',
        SYNCD_SYNC_ADDRESS: 'tcp://127.0.0.1:0',
        SYNCD_API_KEY: apiKey,
        SYNCD_TEST_ROUTES: '1',
        NO_COLOR: '1',
      },
      reject: false,
      stdin: 'ignore',
      buffer: false,
    });
    t.teardown(() => child.kill('SIGKILL'));
    let output = '';
    const onData = (chunk: Buffer) => (output += chunk.toString());
    child.stdout?.on('data', onData);
    await waitFor('ready', async () => (/ INFO: supervisor\[\d+\]: ready /.test(output) ? true : undefined));
    const started = /^\[[^\]]+\] INFO: supervisor\[\d+\]: supervisor started \{.*"url":"([^"]+)"/m.exec(
      output,
    );
    t.ok(started, `the start line, in text: ${output.split('\n')[0]}`);
    const client = new SyncdClient({ address: started?.[1] ?? '', apiKey, timeoutMs: 5000 });
    // The reader stops: once Node's buffer and the pipe are full, every write to stdout would block.
    child.stdout?.off('data', onData);
    child.stdout?.pause();
    await client.call('POST', '/rest/test/log?lines=2000&bytes=1000');
    const before = (await client.status()).pid;
    // A restart makes the supervisor log, and hand connections to a new worker.
    await client.restart();
    for (let i = 0; i < 20; i++)
      t.same(await client.ping(), { ping: 'pong' }, `ping ${i + 1} while the reader is stuck`);
    const after = await waitFor('a new worker', async () => {
      const pid = (await client.status()).pid;
      return pid !== before ? pid : undefined;
    });
    t.not(after, before, 'the restart went through');
    // The reader reads again: a warning says how many lines were lost.
    output = '';
    child.stdout?.on('data', onData);
    child.stdout?.resume();
    await client.call('POST', '/rest/test/log?lines=1&bytes=10');
    await waitFor('the report of dropped lines', async () =>
      /dropped \d+ log lines: standard output did not keep up/.test(output) ? true : undefined,
    );
    await waitFor('a line logged', async () => (/x+ \{/.test(output) ? true : undefined));
    t.match(
      output,
      /^\[[^\]]+\] INFO: worker\[\d+\]: x+ \{.*"line":\d+\}$/m,
      "the worker's lines in text too",
    );
    t.notMatch(output, /^\{/m, 'no JSON line');
    const errors = await client.errors();
    t.ok(
      errors.some((error) => /dropped \d+ log lines/.test(error.message)),
      'also a recent error',
    );
    await client.shutdown();
    t.equal((await child).exitCode, 0);
  },
);

t.test(
  'an open-file limit too low for the connections asked for: exit 2, or the default lowered',
  async (t) => {
    const env = {
      SYNCD_HOME: t.testdir(),
      SYNCD_ADDRESS: '127.0.0.1:0',
      SYNCD_SYNC_ADDRESS: 'tcp://127.0.0.1:0',
      SYNCD_API_KEY: apiKey,
    };
    const given = await execa(
      'prlimit',
      ['--nofile=300:300', process.execPath, syncdBin, 'serve', '--max-connections', '1000'],
      {
        env,
        reject: false,
        timeout: 20_000,
      },
    );
    t.equal(given.exitCode, 2);
    t.match(
      given.stdout,
      /--max-connections \/ SYNCD_MAX_CONNECTIONS: 1000 connections need 1100 open files, but this process may open only 300/,
    );
    const defaulted = execa('prlimit', ['--nofile=300:300', process.execPath, syncdBin, 'serve'], {
      env,
      reject: false,
      buffer: false,
    });
    t.teardown(() => defaulted.kill('SIGKILL'));
    let output = '';
    defaulted.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    await waitFor('ready', async () => (/"msg":"ready"/.test(output) ? true : undefined));
    t.match(output, /serving at most 200 connections instead of 1000: this process may open only 300 files/);
    defaulted.kill('SIGTERM');
    t.equal((await defaulted).exitCode, 0);
  },
);
