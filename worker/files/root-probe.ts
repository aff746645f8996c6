import { stat } from 'node:fs/promises';

/**
 * How long a stat of a folder's root may take before its filesystem is taken for not answering: a
 * directory's metadata, which a live disk gives in milliseconds, and short enough that a request
 * waiting on the folder is answered within a client's 10 s. Taken wrongly, it costs an error state
 * until the next look, 10 s later.
 */
export const ANSWER_TIMEOUT_MS = 5000;

/** An operation given up on: the folder's filesystem stopped answering while it ran. */
export class NotAnsweringError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NotAnsweringError';
  }
}

/*
 * Whether a folder's filesystem answers: a stat of its root, whatever it says, within the timeout. A
 * call on a dead mount (a network share gone, a FUSE server stopped) never returns, cannot be
 * interrupted from Node, and holds one of the four threads of libuv's pool, which every file
 * operation of the worker shares, until the mount comes back: so at most one stat is out at a time,
 * and one still out past the timeout answers every question at once.
 */
export class RootProbe {
  readonly #path: () => string;
  readonly #timeoutMs: number;
  #out: { since: number; answered: Promise<void> } | undefined;

  constructor(path: () => string, timeoutMs = ANSWER_TIMEOUT_MS) {
    this.#path = path;
    this.#timeoutMs = timeoutMs;
  }

  /** Why the filesystem does not answer, or undefined once a stat of the root has answered. */
  async answers(): Promise<string | undefined> {
    const probe = (this.#out ??= this.#send());
    const left = probe.since + this.#timeoutMs - performance.now();
    if (left > 0 && (await within(probe.answered, left))) return undefined;
    return `the folder's filesystem is not answering: a stat of ${this.#path()} has waited more than ${
      this.#timeoutMs / 1000
    } s (a disk or network mount gone?)`;
  }

  /**
   * Forgets the stat still out: another call on the filesystem has just returned, so the next
   * question sends a stat of its own rather than take the old one's silence for the answer.
   */
  forget(): void {
    this.#out = undefined;
  }

  /**
   * What `operation` answers, unless the filesystem stops answering first (looked at every half
   * timeout): then a NotAnsweringError, and the operation goes on unheard until it returns.
   */
  watch<T>(operation: Promise<T>): Promise<T> {
    return new Promise((resolve, reject) => {
      let done = false;
      const look = setInterval(() => {
        void this.answers().then((why) => {
          if (why === undefined || done) return;
          end();
          reject(new NotAnsweringError(why));
        });
      }, this.#timeoutMs / 2);
      look.unref();
      const end = () => {
        done = true;
        clearInterval(look);
      };
      operation.then(
        (value) => {
          if (done) return;
          end();
          resolve(value);
        },
        (error: unknown) => {
          if (done) return;
          end();
          reject(error as Error);
        },
      );
    });
  }

  #send(): { since: number; answered: Promise<void> } {
    const probe = {
      since: performance.now(),
      answered: stat(this.#path()).then(
        () => {},
        () => {},
      ),
    };
    void probe.answered.then(() => {
      if (this.#out === probe) this.#out = undefined;
    });
    return probe;
  }
}

// Whether `promise` settles within `ms`.
async function within(promise: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
    timer.unref();
  });
  try {
    return await Promise.race([promise.then(() => true as const), late]);
  } finally {
    clearTimeout(timer);
  }
}
