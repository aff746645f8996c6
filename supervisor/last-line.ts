// Lines that say nothing of why a process ended: Node's version line, which ends every crash report,
// stack frames (JavaScript `at …` and native `12: 0x… …` after an out-of-memory abort) and the
// banners around them.
const uninformative = /^(?:|Node\.js v\d.*|at .*|\d+: 0x[0-9a-f]+ .*|-+ [\w ]+ -+|<--- [\w ]+ --->)$/;
const MAX_LINE = 1000;

/** Keeps the last informative line of a stream of text chunks, whatever the chunk boundaries. */
export class LastLine {
  #partial = '';
  #last: string | undefined;

  push(chunk: string): void {
    const lines = (this.#partial + chunk).split('\n');
    this.#partial = (lines.pop() ?? '').slice(-MAX_LINE);
    for (const line of lines) this.#keep(line);
  }

  /** The last informative line, counting an unterminated one. */
  get value(): string | undefined {
    const partial = this.#partial.trim();
    return partial !== '' && !uninformative.test(partial) ? partial : this.#last;
  }

  #keep(line: string): void {
    const trimmed = line.trim();
    if (!uninformative.test(trimmed)) this.#last = trimmed.slice(0, MAX_LINE);
  }
}
