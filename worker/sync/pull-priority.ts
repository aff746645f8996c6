/** Names asked for first at most: a client cannot grow it without bound. */
export const MAX_PRIORITY_NAMES = 1000;

/**
 * The files a user asked to have first (POST /rest/db/prio, Syncthing's jobQueue.BringToFront in
 * lib/model/queue.go): the latest asked goes first. A pull takes from here before its own order,
 * so a file asked for while a pull runs is the next one it starts.
 */
export class PullPriority {
  /** Newest first. */
  #names: string[] = [];

  bringToFront(name: string): void {
    this.#names = [name, ...this.#names.filter((other) => other !== name)].slice(0, MAX_PRIORITY_NAMES);
  }

  /** The names asked for, newest first. */
  names(): readonly string[] {
    return this.#names;
  }

  /** Forgets the names `needed` does not accept: a file not needed now is not put first later. */
  keepOnly(needed: (name: string) => boolean): void {
    this.#names = this.#names.filter(needed);
  }

  /** The first name asked for that `waiting` accepts, taken off the list. */
  take(waiting: (name: string) => boolean): string | undefined {
    const at = this.#names.findIndex(waiting);
    if (at === -1) return undefined;
    return this.#names.splice(at, 1)[0];
  }
}
