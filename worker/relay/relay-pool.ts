import { connect } from 'node:net';
import { parseRelayUrl, type RelayUrl } from './relay-connection.ts';

// A pool's answer is read only this far, and this many of its relays kept: Syncthing's public pool
// lists a few hundred.
const MAX_POOL_BYTES = 1024 * 1024;
const MAX_POOL_RELAYS = 2000;
const POOL_TIMEOUT_MS = 30_000;
// Relays are tried fastest first, by the time a TCP connection takes, those within this of each other
// in random order (lib/relay/client/dynamic.go relayAddressesOrder).
const LATENCY_BUCKET_MS = 50;
const PING_TIMEOUT_MS = 1000;
// Relays pinged at once: a pool of hundreds is not opened all together.
const PING_CONCURRENCY = 16;

/**
 * The relays of a pool (`{"relays": [{"url": "relay://…"}, …]}` at an http(s) address), in the order to
 * try them, those that did not answer last; rejects naming the pool when it cannot be read, or once
 * `signal` aborts.
 */
export async function relaysOfPool(address: string, signal: AbortSignal): Promise<RelayUrl[]> {
  const body = await fetchBounded(address, signal);
  let relays: unknown;
  try {
    relays = (JSON.parse(body) as { relays?: unknown }).relays;
  } catch {
    throw new Error(`relay pool ${address}: the answer is not JSON`);
  }
  if (!Array.isArray(relays)) throw new Error(`relay pool ${address}: the answer lists no relays`);
  const parsed = relays
    .slice(0, MAX_POOL_RELAYS)
    .map((relay) => parseRelayUrl(String((relay as { url?: unknown } | null)?.url ?? '')))
    .filter((relay): relay is RelayUrl => typeof relay !== 'string');
  const times: Array<number | undefined> = [];
  let next = 0;
  const pinger = async () => {
    while (next < parsed.length && !signal.aborted) {
      const at = next++;
      times[at] = await tcpPing(parsed[at]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(PING_CONCURRENCY, parsed.length) }, pinger));
  signal.throwIfAborted();
  return parsed
    .map((relay, at) => ({
      relay,
      bucket: Math.floor((times[at] ?? Number.MAX_SAFE_INTEGER) / LATENCY_BUCKET_MS),
      order: Math.random(),
    }))
    .sort((a, b) => a.bucket - b.bucket || a.order - b.order)
    .map(({ relay }) => relay);
}

async function fetchBounded(address: string, signal: AbortSignal): Promise<string> {
  const response = await fetch(address, {
    signal: AbortSignal.any([signal, AbortSignal.timeout(POOL_TIMEOUT_MS)]),
  }).catch((error: Error) => {
    throw new Error(
      `relay pool ${address}: ${error.cause instanceof Error ? error.cause.message : error.message}`,
    );
  });
  if (!response.ok) throw new Error(`relay pool ${address}: HTTP ${response.status}`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response.body ?? []) {
    size += (chunk as Uint8Array).length;
    if (size > MAX_POOL_BYTES)
      throw new Error(`relay pool ${address}: the answer is over ${MAX_POOL_BYTES} bytes`);
    chunks.push(Buffer.from(chunk as Uint8Array));
  }
  return Buffer.concat(chunks).toString();
}

/** How long a TCP connection to the relay takes, or undefined when it cannot be made. */
function tcpPing({ host, port }: RelayUrl): Promise<number | undefined> {
  return new Promise((resolve) => {
    const started = performance.now();
    const socket = connect({ host, port, timeout: PING_TIMEOUT_MS });
    const done = (ms: number | undefined) => {
      socket.destroy();
      resolve(ms);
    };
    socket.once('connect', () => done(performance.now() - started));
    socket.once('error', () => done(undefined));
    socket.once('timeout', () => done(undefined));
  });
}
