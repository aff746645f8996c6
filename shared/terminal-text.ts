// Control characters (C0, DEL, C1), the line and paragraph separators and the bidirectional controls:
// what, printed, can move a terminal's cursor, rewrite the screen, forge a line or reorder what a
// reader sees. Text another device chose (file names, labels, device names) passes through here before
// it reaches a terminal or a text log line.
// oxlint-disable-next-line no-control-regex -- control characters are what it finds
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const UNSAFE_BUT_LINE_FEED =
  // oxlint-disable-next-line no-control-regex -- as UNSAFE, the line feed left out
  /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const SHORT: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function escaped(character: string): string {
  return SHORT[character] ?? `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/** `text` with every unsafe character shown as its escape (`\n`, `\u001b`): one line, as written. */
export function safeLine(text: string): string {
  return text.replace(UNSAFE, escaped);
}

/** As safeLine, but line feeds kept: a text of several lines whose lines are the writer's own. */
export function safeLines(text: string): string {
  return text.replace(UNSAFE_BUT_LINE_FEED, escaped);
}
