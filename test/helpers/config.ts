import { randomBytes } from 'node:crypto';
import { decodeConfiguration } from '../../shared/config/decode.ts';
import type { Configuration } from '../../shared/config/defaults.ts';
import { deviceId } from '../../shared/device-id.ts';
import type { SaveAnswer } from '../../shared/ipc/protocol.ts';
import { WorkerConfig } from '../../worker/config/worker-config.ts';
import { testApiKey } from './app.ts';

export const testDeviceId = 'RFR5QYV-USWWDUL-HS54SQX-PPBXXJW-ARCNP65-74JIARS-VVIDBEL-STAQAQG';

/** A valid device ID nobody has: the ID of random bytes. */
export function newDeviceId(): string {
  return deviceId(randomBytes(64));
}

/** The configuration a new home gets, for this test device. */
export function testConfiguration(input: Record<string, unknown> = {}, myId = testDeviceId): Configuration {
  const gui = { apiKey: testApiKey, ...((input.gui as object | undefined) ?? {}) };
  return decodeConfiguration({ ...input, gui }, myId, 'test-device');
}

/**
 * A worker's configuration with the supervisor played in-process: saves succeed at once (or answer
 * `refuse` when set) and are applied; `saved` lists them.
 */
export function localConfig(config = testConfiguration(), myId = testDeviceId) {
  const saved: Configuration[] = [];
  const control: { refuse?: SaveAnswer } = {};
  let revision = 1;
  const worker: WorkerConfig = new WorkerConfig({
    config,
    revision,
    myId,
    save: async (next) => {
      if (control.refuse) return control.refuse;
      revision += 1;
      saved.push(next);
      worker.apply(next, revision);
      return { ok: true, revision };
    },
  });
  return { config: worker, saved, control };
}
