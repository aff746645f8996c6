// The log's two formats: JSON lines for collectors, text for people, and what each part of the
// logging (standard output, the recent errors, the log kept for /rest/system/log) receives.
import t from 'tap';
import { createLogger, logDestination } from '../../shared/logger.ts';
import { LogBuffer } from '../../shared/log-buffer.ts';
import type { RecentError } from '../../shared/api-types.ts';

/** A worker's logger writing text, without colour, to a captured stream. */
async function textLogger() {
  const stdout = capture();
  return {
    stdout,
    logger: createLogger('worker', 'info', undefined, await logDestination('text', stdout.stream, false)),
  };
}

function capture() {
  const written: string[] = [];
  return { written, stream: { write: (line: string) => void written.push(line) } };
}

// `[2026-11-27 12:00:00.123 +0545]` as a Date.
function timeOf(line: string): Date {
  const [, date, time, hours, minutes] = /^\[(\S+) (\S+) ([+-]\d\d)(\d\d)\]/.exec(line) ?? [];
  return new Date(`${date}T${time}${hours}:${minutes}`);
}

t.test('text: one line per record, led by the time, level and writer; JSON still for the rest', async (t) => {
  const stdout = capture();
  const warnings: RecentError[] = [];
  const buffer = new LogBuffer();
  const logger = createLogger(
    'worker',
    'info',
    (error) => warnings.push(error),
    await logDestination('text', stdout.stream, false),
    buffer.stream(),
  );
  // A zone with minutes in its offset, whatever the machine's.
  const zone = process.env.TZ;
  process.env.TZ = 'Asia/Kathmandu';
  t.teardown(() => {
    if (zone === undefined) delete process.env.TZ;
    else process.env.TZ = zone;
  });
  const before = Date.now();
  logger
    .child({ facility: 'model' })
    .info({ folder: 'f', item: 'a.txt', size: 5 }, 'Synced file a.txt in folder f');
  logger.warn({ err: new Error('the disk is full') }, 'cannot pull b.txt');
  t.equal(stdout.written.length, 2, 'one write per record');
  const [synced, warned] = stdout.written as [string, string];
  t.match(
    synced,
    /^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} [+-]\d{4}\] INFO: worker\[\d+\] model: Synced file a\.txt in folder f \{"folder":"f","item":"a\.txt","size":5\}\n$/,
  );
  t.match(synced, `worker[${process.pid}]`, 'the pid of the process that wrote it');
  t.notMatch(
    synced,
    /"role"|"pid"|"hostname"|"facility"|"time"|"level"/,
    'what the lead says is not repeated',
  );
  t.notMatch(synced, '\u001b[', 'no colors unless asked');
  t.match(synced, /^\[[^\]]+ \+0545\]/, 'the local offset');
  const shown = timeOf(synced).getTime();
  t.ok(
    shown >= before - 1 && shown <= Date.now() + 1,
    'the local time with its offset: the moment it was written',
  );
  t.match(warned, /^\[[^\]]+\] WARN: worker\[\d+\]: cannot pull b\.txt \n/);
  t.match(warned, /\n\s+at /, "the error's stack on lines of its own");

  t.match(
    warnings,
    [{ message: 'cannot pull b.txt: the disk is full', level: 40 }],
    'the warning sink still reads JSON',
  );
  t.match(
    buffer.since().map((line) => line.message),
    ['Synced file a.txt in folder f', 'cannot pull b.txt: the disk is full'],
    'and so does the log kept',
  );
});

t.test('text: a line break in a message cannot forge a line', async (t) => {
  const { stdout, logger } = await textLogger();
  logger.info({ item: 'a\nb' }, 'Synced file a\n[2026-11-27 12:00:00.000 +0000] ERROR: forged\r\n');
  t.equal(stdout.written.length, 1);
  t.equal(stdout.written[0]?.split('\n').length, 2, 'one line and its end');
  t.match(
    stdout.written[0],
    'Synced file a\\n[2026-11-27 12:00:00.000 +0000] ERROR: forged\\r\\n {"item":"a\\nb"}',
  );
});

t.test('text: a control character in a message or an error cannot drive the terminal', async (t) => {
  const { stdout, logger } = await textLogger();
  const error = new Error('cannot pull evil\u001b[2J\nforged line\u009b\u202e');
  logger.warn({ err: error }, 'Synced file \u0007bell\u001b]0;title\u0007');
  const written = stdout.written.join('');
  t.notMatch(
    written,
    // oxlint-disable-next-line no-control-regex -- what must not be written
    /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/,
    'no control character but line ends',
  );
  t.match(written, 'Synced file \\u0007bell\\u001b]0;title\\u0007');
  t.match(written, 'cannot pull evil\\u001b[2J\\nforged line\\u009b\\u202e');
  t.notMatch(written, /^forged line/m, 'the message of the stack forges no line');
});

t.test('text is colored when asked (a terminal)', async (t) => {
  const stdout = capture();
  createLogger('supervisor', 'info', undefined, await logDestination('text', stdout.stream, true)).info(
    'ready',
  );
  t.match(stdout.written[0], '\u001b[32mINFO\u001b[39m', 'the level in green');
  t.match(stdout.written[0], `\u001b[36msupervisor[${process.pid}]: ready`, 'the message in cyan');
});

t.test('json: the lines as pino writes them, straight to the output', async (t) => {
  const stdout = capture();
  const destination = await logDestination('json', stdout.stream);
  t.equal(destination, stdout.stream, 'nothing between');
  createLogger('supervisor', 'info', undefined, destination).info({ address: '127.0.0.1:8384' }, 'ready');
  t.match(JSON.parse(stdout.written[0] as string), {
    level: 30,
    role: 'supervisor',
    pid: process.pid,
    address: '127.0.0.1:8384',
    msg: 'ready',
    time: Number,
  });
});
