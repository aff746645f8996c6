import type { DeviceConnection, SyncdClient } from '../../shared/client/client.ts';
import type { DeviceConfiguration } from '../../shared/config/defaults.ts';
import { safeLine } from '../../shared/terminal-text.ts';
import { bytes, rate, type Rate, sampleRates } from './traffic.ts';
import type { Print } from './format.ts';

/** What `syncd devices` shows of a connected device besides its configuration. */
interface Traffic {
  connection: DeviceConnection;
  rate: Rate | undefined;
  /** Percent of the global versions of the folders shared with it that it has. */
  completion: number | undefined;
}

/** `syncd devices`: each device, connected or not, its traffic and completion; then the pending ones. */
export async function listDevices(client: SyncdClient, myID: string, print: Print): Promise<void> {
  const [devices, { connections }, pending] = await Promise.all([
    client.devices(),
    client.connections(),
    // Shown when the service holds them (not mid-restart).
    client.pendingDevices().catch(() => ({})),
  ]);
  const [rates, completions] = await Promise.all([
    sampleRates(client, connections),
    Promise.all(
      devices.map((device) =>
        connections[device.deviceID]?.connected
          ? client.completion(device.deviceID).then(
              (answer) => answer.completion,
              () => undefined,
            )
          : undefined,
      ),
    ),
  ]);
  const traffic = new Map<string, Traffic>();
  devices.forEach((device, i) => {
    const connection = connections[device.deviceID];
    if (connection?.connected)
      traffic.set(device.deviceID, {
        connection,
        rate: rates.get(device.deviceID),
        completion: completions[i],
      });
  });
  print(
    devices.map((device) => {
      const seen = traffic.get(device.deviceID);
      return seen
        ? { ...device, connection: seen.connection, ...seen.rate, completion: seen.completion }
        : device;
    }),
    devicesTable(devices, myID, traffic, pending),
  );
}

function devicesTable(
  devices: DeviceConfiguration[],
  myID: string,
  traffic: ReadonlyMap<string, Traffic>,
  pending: Record<string, { name: string; address: string }>,
): string {
  if (devices.length === 0) return 'no devices';
  const lines: string[] = [];
  for (const device of devices) {
    const seen = traffic.get(device.deviceID);
    const state =
      device.deviceID === myID
        ? 'this device'
        : device.paused
          ? 'paused'
          : seen
            ? `connected at ${seen.connection.address}, ${safeLine(seen.connection.clientVersion)}`
            : 'not connected';
    lines.push(
      `${device.deviceID}  ${safeLine(device.name) || '(no name)'}  ${device.addresses.join(' ')}  (${state})`,
    );
    if (!seen) continue;
    const { connection, rate: measured, completion } = seen;
    const speed = (bytesPerSecond: number | undefined) =>
      bytesPerSecond === undefined ? '' : ` (${rate(bytesPerSecond)})`;
    lines.push(
      `  in ${bytes(connection.inBytesTotal)}${speed(measured?.inBytesPerSecond)}, out ${bytes(connection.outBytesTotal)}${speed(measured?.outBytesPerSecond)}${completion === undefined ? '' : `; it has ${Math.floor(completion)}% of the folders shared with it`}`,
    );
  }
  for (const [id, { name, address }] of Object.entries(pending)) {
    lines.push(
      `${id}  ${safeLine(name) || '(no name)'}  (pending: last connected from ${address}, not configured; syncd pending accept ${id} adds it)`,
    );
  }
  return lines.join('\n');
}
