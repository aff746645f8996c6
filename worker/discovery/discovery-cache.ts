/** Where a device's addresses were learned: a local announcement, a global lookup, or a hint. */
export type DiscoverySource = 'local' | 'global' | 'hint';

interface Entry {
  addresses: string[];
  /** Epoch ms after which the entry is forgotten; Infinity for hints. */
  expires: number;
}

/**
 * Device ID → addresses, as discovery learned them, each source kept apart and forgotten when it
 * expires (a local announcement after 90 s, as Syncthing does).
 */
export class DiscoveryCache {
  readonly #entries = new Map<string, Map<DiscoverySource, Entry>>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** Records what `source` says of `device`; true when that adds an address not known before. */
  set(device: string, source: DiscoverySource, addresses: readonly string[], ttlMs = Infinity): boolean {
    const before = new Set(this.addresses(device));
    let sources = this.#entries.get(device);
    if (!sources) this.#entries.set(device, (sources = new Map()));
    const kept = source === 'hint' ? (sources.get('hint')?.addresses ?? []) : [];
    sources.set(source, { addresses: [...new Set([...kept, ...addresses])], expires: this.#now() + ttlMs });
    return this.addresses(device).some((address) => !before.has(address));
  }

  /** Every address known now for the device, hints first, without repeats. */
  addresses(device: string): string[] {
    const sources = this.#entries.get(device);
    if (!sources) return [];
    const now = this.#now();
    const addresses: string[] = [];
    for (const source of ['hint', 'local', 'global'] as const) {
      const entry = sources.get(source);
      if (entry && entry.expires > now) addresses.push(...entry.addresses);
      else if (entry) sources.delete(source);
    }
    if (sources.size === 0) this.#entries.delete(device);
    return [...new Set(addresses)];
  }

  /** Syncthing's GET /rest/system/discovery: every device with addresses known now. */
  snapshot(): Record<string, { addresses: string[] }> {
    const out: Record<string, { addresses: string[] }> = {};
    for (const device of [...this.#entries.keys()].sort()) {
      const addresses = this.addresses(device);
      if (addresses.length > 0) out[device] = { addresses };
    }
    return out;
  }
}
