import { write } from 'node:fs';

export const MAX_QUEUED_BYTES = 1024 * 1024;
const RETRY_MS = 20;

/**
 * Writes to a file descriptor (stdout, stderr) without ever blocking the event loop: writes happen
 * off the loop, and what the reader does not take in time waits in a bounded queue. When the reader is
 * stuck (a paused terminal, a log shipper that stopped reading), lines past the bound are dropped and
 * counted instead: serving must never wait on a log reader.
 */
export class LossyOutput {
  readonly #fd: number;
  readonly #maxQueued: number;
  readonly #queue: Buffer[] = [];
  #queued = 0;
  #writing = false;
  #dropped = 0;
  #unreported = 0;
  #idle: Array<() => void> = [];
  /** Hears how many lines were dropped, once lines get through again after some were. */
  onRecovered: ((dropped: number) => void) | undefined;

  constructor(fd: number, maxQueued = MAX_QUEUED_BYTES) {
    this.#fd = fd;
    this.#maxQueued = maxQueued;
  }

  /** Lines dropped so far because the reader did not keep up. */
  get dropped(): number {
    return this.#dropped;
  }

  write(chunk: string | Buffer): boolean {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    if (this.#queued + buffer.length > this.#maxQueued) {
      this.#drop(buffer);
      return false;
    }
    this.#queue.push(buffer);
    this.#queued += buffer.length;
    if (!this.#writing) this.#pump();
    return true;
  }

  /** Resolves true once everything queued is written, false if `timeoutMs` passes first. */
  flush(timeoutMs: number): Promise<boolean> {
    if (!this.#writing) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (written: boolean) => {
        clearTimeout(timer);
        this.#idle = this.#idle.filter((waiter) => waiter !== onIdle);
        resolve(written);
      };
      const onIdle = () => done(true);
      const timer = setTimeout(() => done(false), timeoutMs);
      this.#idle.push(onIdle);
    });
  }

  #drop(buffer: Buffer): void {
    const lines = countLines(buffer);
    this.#dropped += lines;
    this.#unreported += lines;
  }

  #pump(): void {
    this.#writing = true;
    const buffer = this.#queue.length === 1 ? (this.#queue[0] as Buffer) : Buffer.concat(this.#queue);
    this.#queue.length = 0;
    this.#queue.push(buffer);
    write(this.#fd, buffer, 0, buffer.length, null, (error, written) => {
      if (error && (error.code === 'EAGAIN' || error.code === 'EWOULDBLOCK')) {
        setTimeout(() => this.#pump(), RETRY_MS).unref();
        return;
      }
      if (error) {
        // The reader is gone for good (EPIPE, EIO after a terminal hung up): nothing queued can be written.
        for (const lost of this.#queue.splice(0)) this.#drop(lost);
        this.#queued = 0;
      } else {
        this.#queue[0] = buffer.subarray(written);
        this.#queued -= written;
        if (this.#queued === 0) this.#queue.length = 0;
        if (this.#unreported > 0) {
          const dropped = this.#unreported;
          this.#unreported = 0;
          this.onRecovered?.(dropped);
        }
      }
      if (this.#queued > 0) {
        this.#pump();
        return;
      }
      this.#writing = false;
      for (const waiter of this.#idle.splice(0)) waiter();
    });
  }
}

function countLines(buffer: Buffer): number {
  let lines = 0;
  for (let at = buffer.indexOf(10); at !== -1; at = buffer.indexOf(10, at + 1)) lines += 1;
  return Math.max(1, lines);
}
