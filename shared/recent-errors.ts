import type { RecentError } from './api-types.ts';

export const MAX_RECENT_ERRORS = 1000;
/** The whole list as JSON, at most: what a client reading it costs, whatever the errors hold. */
export const MAX_RECENT_ERRORS_BYTES = 1024 * 1024;

/** One change to the list, as it travels between the processes that each keep a copy. */
export type ErrorChange = { op: 'add'; error: RecentError; slot?: string } | { op: 'clear' };

interface Entry {
  error: RecentError;
  /** Its JSON, made once: reading the list only joins these. */
  json: string;
  bytes: number;
  slot: string | undefined;
}

/**
 * The recent errors the service holds, oldest first, keeping the newest within both a count and a byte
 * bound. An error added with a `slot` replaces the one of the same slot, so that a source anyone can
 * trigger (requests without the key) holds one entry at most and can never push the others out.
 */
export class RecentErrors {
  readonly #entries: Entry[] = [];
  readonly #limit: number;
  readonly #maxBytes: number;
  #bytes = 0;
  #body: Buffer | undefined;

  constructor(
    initial: readonly RecentError[] = [],
    limit = MAX_RECENT_ERRORS,
    maxBytes = MAX_RECENT_ERRORS_BYTES,
  ) {
    this.#limit = limit;
    this.#maxBytes = maxBytes;
    for (const error of initial) this.add(error);
  }

  add(error: RecentError, slot?: string): void {
    if (slot !== undefined) {
      const at = this.#entries.findIndex((entry) => entry.slot === slot);
      if (at !== -1) this.#remove(at);
    }
    let entry = this.#entry(error, slot);
    // One error larger than the whole bound keeps its start: still readable, still bounded (an escaped
    // control character takes 6 bytes of JSON).
    if (entry.bytes > this.#maxBytes) {
      entry = this.#entry(
        { ...error, message: `${error.message.slice(0, this.#maxBytes / 8)}… (cut)` },
        slot,
      );
    }
    this.#entries.push(entry);
    this.#bytes += entry.bytes;
    while (this.#entries.length > this.#limit || this.#bytes > this.#maxBytes) this.#remove(0);
    this.#body = undefined;
  }

  apply(change: ErrorChange): void {
    if (change.op === 'add') this.add(change.error, change.slot);
    else this.clear();
  }

  list(): RecentError[] {
    return this.#entries.map((entry) => entry.error);
  }

  /** `{"errors":[…]}` as bytes, made once per change and shared by every reader until the next. */
  body(): Buffer {
    this.#body ??= Buffer.from(`{"errors":[${this.#entries.map((entry) => entry.json).join(',')}]}`);
    return this.#body;
  }

  clear(): void {
    this.#entries.length = 0;
    this.#bytes = 0;
    this.#body = undefined;
  }

  #entry(error: RecentError, slot: string | undefined): Entry {
    const json = JSON.stringify(error);
    // The comma that joins it to the next counts too.
    return { error, json, slot, bytes: Buffer.byteLength(json) + 1 };
  }

  #remove(at: number): void {
    const [entry] = this.#entries.splice(at, 1);
    if (entry) this.#bytes -= entry.bytes;
  }
}
