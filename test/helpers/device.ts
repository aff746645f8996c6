import { X509Certificate } from 'node:crypto';
import { deviceId } from '../../shared/device-id.ts';
import { generateIdentity } from '../../shared/identity.ts';

export interface TestDevice {
  cert: string;
  key: string;
  id: string;
}

let made: Promise<TestDevice> | undefined;

/** A device identity as syncd generates it, made once per test process (generating costs ~50 ms). */
export function testDevice(): Promise<TestDevice> {
  made ??= newTestDevice();
  return made;
}

/** A device identity of its own, for a test that needs two devices. */
export async function newTestDevice(): Promise<TestDevice> {
  const { cert, key } = await generateIdentity();
  return { cert, key, id: deviceId(new X509Certificate(cert).raw) };
}
