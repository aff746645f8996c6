import type { Test } from 'tap';
import { shortIdOf } from '../../shared/device-id.ts';
import type { WorkerConfig } from '../../worker/config/worker-config.ts';
import { EventLog } from '../../worker/events/event-log.ts';
import { openService, type SyncService } from '../../worker/service/open-service.ts';
import { silentLogger } from './app.ts';
import { testDeviceId } from './config.ts';
import { testDevice } from './device.ts';
import './teardown-first.ts';

/**
 * The service of the test device over `home`, in-process, as a worker holds it: the index, hashing
 * threads, folders and connections of `config`. `close` may be called before the test ends; it is
 * called in t.teardown anyway, once.
 */
export async function heldService(
  t: Test,
  home: string,
  config: WorkerConfig,
  events = new EventLog(),
): Promise<{ service: SyncService; close: () => Promise<void> }> {
  const service = await openService({
    home,
    config,
    events,
    shortId: shortIdOf(testDeviceId),
    myId: testDeviceId,
    credentials: await testDevice(),
    logger: silentLogger(),
  });
  let closed: Promise<void> | undefined;
  const close = () => (closed ??= service.close());
  t.teardown(close);
  return { service, close };
}
