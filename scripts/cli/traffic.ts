import type { DeviceConnection, SyncdClient } from '../../shared/client/client.ts';

/** Bytes per second in and out of one device, measured between two looks at its counters. */
export interface Rate {
  inBytesPerSecond: number;
  outBytesPerSecond: number;
}

/** How long the listings watch the counters: long enough to see a transfer, short enough to wait for. */
export const SAMPLE_MS = 1000;

/**
 * The rates of the connected devices: GET /rest/system/connections again after `ms`, compared with
 * `first` (Syncthing's GUI does the same between its polls; the REST interface has no rates).
 */
export async function sampleRates(
  client: SyncdClient,
  first: Record<string, DeviceConnection>,
  ms = SAMPLE_MS,
): Promise<Map<string, Rate>> {
  const rates = new Map<string, Rate>();
  if (!Object.values(first).some((connection) => connection.connected)) return rates;
  const started = performance.now();
  await new Promise((resolve) => setTimeout(resolve, ms));
  const { connections } = await client.connections();
  const seconds = (performance.now() - started) / 1000;
  for (const [id, now] of Object.entries(connections)) {
    const before = first[id];
    if (!before?.connected || !now.connected) continue;
    rates.set(id, {
      inBytesPerSecond: Math.max(0, (now.inBytesTotal - before.inBytesTotal) / seconds),
      outBytesPerSecond: Math.max(0, (now.outBytesTotal - before.outBytesTotal) / seconds),
    });
  }
  return rates;
}

/** A count of bytes as people read it: 512 B, 1.5 KiB, 3.2 GiB. */
export function bytes(count: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = count;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${unit === 0 ? Math.round(value) : value.toFixed(1)} ${units[unit]}`;
}

export function rate(bytesPerSecond: number): string {
  return `${bytes(bytesPerSecond)}/s`;
}

/** A count with its noun, singular or plural: 1 item, 3 items. */
export function counted(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
