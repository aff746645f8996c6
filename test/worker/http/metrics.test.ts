// GET /metrics in-process: a real index and folder behind the model, the text checked as Prometheus
// parses it, Syncthing 2.x's names and labels, the supervisor's figures, and the key it needs.
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { buildApp } from '../../../worker/http/app.ts';
import { EventLog } from '../../../worker/events/event-log.ts';
import { appOptions, injector, testApiKey } from '../../helpers/app.ts';
import { localConfig, newDeviceId, testConfiguration, testDeviceId } from '../../helpers/config.ts';
import { heldService } from '../../helpers/held-service.ts';

t.test('Syncthing’s folder, device and config metrics, syncd’s own, the process’s', async (t) => {
  const home = t.testdir({ data: { 'a.txt': 'hello', sub: { 'b.txt': 'world' } }, resting: {} });
  const other = newDeviceId();
  const local = localConfig(
    testConfiguration({
      folders: [
        { id: 'f', label: 'F', path: join(home, 'data') },
        { id: 'p', label: 'Resting', path: join(home, 'resting'), paused: true },
      ],
      devices: [{ deviceID: other, name: 'other', addresses: ['dynamic'] }],
    }),
  );
  const events = new EventLog();
  let held: Awaited<ReturnType<typeof heldService>> | undefined;
  const startTime = new Date(Date.now() - 60_000).toISOString();
  const app = buildApp(
    appOptions({
      config: local.config,
      events,
      model: () => held?.service.model,
      status: {
        startTime: new Date(),
        address: '127.0.0.1:8384',
        supervisor: () => ({ pid: process.pid, startTime, restarts: 2, crashes: 1 }),
        serviceHeld: () => held !== undefined,
      },
    }),
  );
  await app.ready();
  t.teardown(() => app.close());
  // The app counts from its start, as a worker's does before it is given the service.
  held = await heldService(t, home, local.config, events);
  await injector(app)('POST', '/rest/db/scan?folder=f');

  t.equal((await app.inject({ url: '/metrics' })).statusCode, 401, 'the key, as the REST API');
  const cpuBefore = process.cpuUsage();
  const response = await app.inject({ url: '/metrics', headers: { authorization: `Bearer ${testApiKey}` } });
  t.equal(response.statusCode, 200);
  t.equal(response.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
  const value = parsed(t, response.body);

  t.ok(
    value('process_cpu_seconds_total', {})! >= (cpuBefore.user + cpuBefore.system) / 1e6,
    "the process's CPU time since its start, not since the first scrape",
  );
  t.ok(value('nodejs_eventloop_lag_min_seconds', {})! < 1, 'the event loop sampled before the first answer');
  t.equal(value('syncthing_model_folder_state', { folder: 'f' }), 0, 'idle, as Syncthing numbers it');
  t.equal(value('syncthing_model_folder_state', { folder: 'p' }), undefined, 'a paused folder does not run');
  t.equal(value('syncthing_model_folder_summary', { folder: 'f', scope: 'local', type: 'files' }), 2);
  // A directory counts 128 bytes, as in Syncthing.
  t.equal(value('syncthing_model_folder_summary', { folder: 'f', scope: 'global', type: 'bytes' }), 138);
  t.equal(value('syncthing_model_folder_summary', { folder: 'f', scope: 'need', type: 'files' }), 0);
  t.ok(value('syncthing_model_folder_scans_total', { folder: 'f' })! >= 1, 'the scans counted');
  t.ok(value('syncthing_model_folder_scan_seconds_total', { folder: 'f' })! >= 0);
  t.equal(value('syncthing_model_folder_pulls_total', { folder: 'f' }), 0, 'there while zero');
  t.equal(value('syncthing_protocol_sent_bytes_total', { device: other }), 0);
  t.equal(value('syncthing_protocol_recv_bytes_total', { device: other }), 0);
  t.equal(value('syncthing_connections_active', { device: other }), 0);
  t.equal(value('syncthing_protocol_sent_bytes_total', { device: testDeviceId }), undefined, 'not this one');
  t.equal(
    value('syncthing_config_folder_info', {
      folder: 'p',
      label: 'Resting',
      type: 'sendreceive',
      path: join(home, 'resting'),
      paused: 'true',
    }),
    1,
  );
  t.equal(
    value('syncthing_config_device_info', {
      device: other,
      name: 'other',
      introducer: 'false',
      paused: 'false',
      untrusted: 'false',
    }),
    1,
  );
  t.equal(
    response.body.split('\n').filter((line) => line.startsWith('syncthing_config_device_info{')).length,
    2,
    'every configured device, this one included, as Syncthing lists them',
  );
  t.match(response.body, `syncthing_config_device_info{device="${testDeviceId}"`);
  t.ok(value('syncthing_events_total', { event: 'StateChanged', state: 'created' })! >= 2);

  t.equal(value('syncd_worker_restarts_total', {}), 2);
  t.equal(value('syncd_worker_crashes_total', {}), 1);
  t.equal(value('syncd_supervisor_start_time_seconds', {}), Date.parse(startTime) / 1000);
  t.equal(value('syncd_service_held', {}), 1);
  if (process.platform === 'linux') t.ok(value('syncd_supervisor_resident_memory_bytes', {})! > 1e6);
  t.ok(value('process_resident_memory_bytes', {})! > 1e6, 'the worker’s own memory');
  t.ok(value('nodejs_heap_size_used_bytes', {})! > 0);

  // The handover: the folders' figures go with the model, the counters stay.
  await held.close();
  held = undefined;
  const without = parsed(t, (await injector(app)('GET', '/metrics')).text);
  t.equal(without('syncthing_model_folder_state', { folder: 'f' }), undefined);
  t.ok(without('syncthing_model_folder_scans_total', { folder: 'f' })! >= 1);
  t.equal(without('syncd_service_held', {}), 0);
});

/**
 * The samples of Prometheus' text format (0.0.4), each line checked: comments are HELP or TYPE, every
 * sample's family has one TYPE, before it. A sample is found by its name and all its labels.
 */
function parsed(t: Test, text: string) {
  const types = new Map<string, string>();
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const comment = /^# (HELP|TYPE) ([a-zA-Z_:][\w:]*) (.*)$/.exec(line);
    if (comment) {
      if (comment[1] === 'TYPE') {
        if (types.has(comment[2]!)) t.fail(`${comment[2]}: a second TYPE`);
        t.match(comment[3], /^(counter|gauge|histogram|summary|untyped)$/, line);
        types.set(comment[2]!, comment[3]!);
      }
      continue;
    }
    const sample = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!sample) {
      t.fail(`not a sample: ${line}`);
      continue;
    }
    const [, name, labels, number] = sample as unknown as [string, string, string | undefined, string];
    const family = name.replace(/_(bucket|sum|count)$/, '');
    if (!types.has(name) && !types.has(family)) t.fail(`${name}: no TYPE before it`);
    const pairs = [...(labels ?? '').matchAll(/([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)",?/g)];
    if (pairs.map((pair) => pair[0]).join('') !== (labels ?? '')) t.fail(`labels: ${line}`);
    const value = Number(number);
    if (Number.isNaN(value) && number !== 'NaN') t.fail(`value: ${line}`);
    samples.set(key(name, Object.fromEntries(pairs.map((pair) => [pair[1], pair[2]]))), value);
  }
  return (name: string, labels: Record<string, string>) => samples.get(key(name, labels));
}

function key(name: string, labels: Record<string, string | undefined>): string {
  return `${name}${JSON.stringify(Object.entries(labels).sort())}`;
}
