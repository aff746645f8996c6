// Lines that say nothing of why a process ended: Node's version line, which ends every crash report,
// stack frames (JavaScript `at …` and native `12: 0x… …` after an out-of-memory abort), the banners
// around them, and the braces and fields of an error's properties that Node prints after it.
const uninformative =
  /^(?:\s*|Node\.js v\d.*|\s*at .*|\s*\d+: 0x[0-9a-f]+ .*|-+ [\w ]+ -+|<--- [\w ]+ --->|\s*[{}[\]^]+,?|\s+\w+: .*)$/;
// The line that names the error: `TypeError: …`, `Error [ERR_MODULE_NOT_FOUND]: …`, `FATAL ERROR: …`,
// and the worker's own last word, `worker crashed: …`.
const naming = /^(?:worker crashed: |FATAL ERROR: |[A-Z]\w*(?:Error|Exception)(?: \[\w+\])?: )/;
const MAX_LINE = 1000;

/**
 * Keeps the line of a stream of text chunks that best says why the process ended, whatever the chunk
 * boundaries: the last line naming an error, else the last informative line.
 */
export class LastLine {
  #partial = '';
  #last: string | undefined;
  #naming: string | undefined;

  push(chunk: string): void {
    const lines = (this.#partial + chunk).split('\n');
    this.#partial = (lines.pop() ?? '').slice(-MAX_LINE);
    for (const line of lines) this.#keep(line);
  }

  /** The line that says why, counting an unterminated one. */
  get value(): string | undefined {
    const partial = this.#partial.trim();
    if (naming.test(partial)) return partial;
    if (this.#naming !== undefined) return this.#naming;
    return !uninformative.test(this.#partial) ? partial : this.#last;
  }

  #keep(line: string): void {
    const trimmed = line.trim().slice(0, MAX_LINE);
    if (naming.test(trimmed)) this.#naming = trimmed;
    else if (!uninformative.test(line)) this.#last = trimmed;
  }
}
