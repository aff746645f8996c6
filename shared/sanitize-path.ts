/**
 * A name for a directory made on someone's behalf, from text a device sent (a folder's label or ID),
 * as Syncthing makes it (lib/fs/util.go SanitizePath): characters that are not printable, that Windows
 * refuses in names, shell metacharacters and the path separators become spaces, runs of spaces one,
 * spaces at either end go, and a name Windows reserves gets a `-` in front. What is left is one name
 * of one directory, never a path: it holds no `/`. It can still be `''`, `.` or `..`, which a caller
 * never joins to a path (see isOneName).
 */
export function sanitizePath(text: string): string {
  let out = '';
  let previous = ' ';
  for (const character of text) {
    const kept = PRINTABLE.test(character) && character !== '\uFFFD' && !DISALLOWED.includes(character);
    const c = kept ? character : ' ';
    if (!(c === ' ' && previous === ' ')) out += c;
    previous = c;
  }
  const name = out.trim();
  return isWindowsReserved(name) ? `-${name}` : name;
}

/** Whether `name` names one entry inside a directory: not empty, `.`, `..`, nor holding a `/`. */
export function isOneName(name: string): boolean {
  return name !== '' && name !== '.' && name !== '..' && !name.includes('/');
}

// Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space.
const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;
// Syncthing's list; the control characters it adds are not printable, so already replaced.
const DISALLOWED = `'/\\[]{};:!@$%&^#<>:"|?*`;

// Windows refuses these names, with any extension (nul.txt.jpg too).
function isWindowsReserved(name: string): boolean {
  const dot = name.indexOf('.');
  const base = (dot === -1 ? name : name.slice(0, dot)).toUpperCase();
  return /^(CON|PRN|AUX|NUL|COM[0-9]|LPT[0-9])$/.test(base);
}
