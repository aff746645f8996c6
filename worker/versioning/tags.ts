/*
 * Version names, as lib/versioner/util.go (TagFilename, UntagFilename, extractTag) and versioner.go
 * (TimeFormat, timeGlob) make and read them: the archive moment in local time, `YYYYMMDD-HHMMSS`,
 * before the last extension of the last path element, so that the names Syncthing wrote are read back
 * here and the other way round.
 */

const pad = (value: number, width = 2) => String(value).padStart(width, '0');

/** Go's `t.Format("20060102-150405")` of a local time. */
export function formatTag(at: Date): string {
  return (
    `${pad(at.getFullYear(), 4)}${pad(at.getMonth() + 1)}${pad(at.getDate())}-` +
    `${pad(at.getHours())}${pad(at.getMinutes())}${pad(at.getSeconds())}`
  );
}

/**
 * Go's `time.ParseInLocation("20060102-150405", tag, time.Local)`: exactly those digits, each field
 * within its range (a 31st of April fails), or undefined.
 */
export function parseTag(tag: string): Date | undefined {
  const match = /^([0-9]{4})([0-9]{2})([0-9]{2})-([0-9]{2})([0-9]{2})([0-9]{2})$/.exec(tag);
  if (!match) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  const at = new Date(2000, 0, 1);
  at.setFullYear(year, month - 1, day);
  at.setHours(hour, minute, second, 0);
  return at;
}

const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysIn(year: number, month: number): number {
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return month === 2 && leap ? 29 : (DAYS[month - 1] as number);
}

/** Go's filepath.Ext: from the last dot of the last path element, the dot included; '' without one. */
export function extension(path: string): string {
  for (let i = path.length - 1; i >= 0 && path[i] !== '/'; i--) {
    if (path[i] === '.') return path.slice(i);
  }
  return '';
}

/** TagFilename: `~tag` inserted before the extension of the last element (`a.tar~T.gz`, `~T.bashrc`). */
export function tagFilename(name: string, tag: string): string {
  const slash = name.lastIndexOf('/');
  const base = name.slice(slash + 1);
  const ext = extension(base);
  return `${name.slice(0, slash + 1)}${base.slice(0, base.length - ext.length)}~${tag}${ext}`;
}

// util.go's tagExp, run on the whole relative path as Syncthing runs it (so `[^~.]` takes a '/' too).
const TAG = /.*~([^~.]+)(?:\.[^.]+)?$/;

/** extractTag: the tag of a version name, at its end or before its extension; '' without one. */
export function extractTag(path: string): string {
  return TAG.exec(path)?.[1] ?? '';
}

/**
 * UntagFilename: the original name and the tag of a version name, ['', ''] when it has none. An
 * old-style `name.ext~TAG` gives `name.ext` (listed, never restorable, as in Syncthing).
 */
export function untagFilename(path: string): [name: string, tag: string] {
  const ext = extension(path);
  const tag = extractTag(path);
  if (tag === '') return ['', ''];
  if (ext.endsWith(tag)) return [path.slice(0, path.length - tag.length - 1), tag];
  return [path.slice(0, path.length - ext.length - tag.length - 1) + ext, tag];
}

/**
 * Whether `candidate`, in the same directory, is a version of the file `base`: util.go's
 * findAllVersions globs `base~<timeGlob>ext`; this compares the same parts literally, so that a name
 * holding glob characters (`[1].txt`) finds its versions too.
 */
export function isVersionOf(base: string, candidate: string): boolean {
  const ext = extension(base);
  const stem = `${base.slice(0, base.length - ext.length)}~`;
  return (
    candidate.length === stem.length + 15 + ext.length &&
    candidate.startsWith(stem) &&
    candidate.endsWith(ext) &&
    /^[0-9]{8}-[0-9]{6}$/.test(candidate.slice(stem.length, stem.length + 15))
  );
}

/** Go's sort.Strings order (by UTF-8 bytes), which the interval and keep rules depend on. */
export function sortLikeGo(names: readonly string[]): string[] {
  return [...names].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
}
