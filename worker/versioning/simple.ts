import { extractTag, parseTag, sortLikeGo } from './tags.ts';
/*
 * lib/versioner/simple.go: tagged versions, the newest `keep` of each file kept, those older than
 * cleanoutDays removed. Its cleanout is v1.22's (simple.go toRemove, fixing #7988): 1.19.2 judged
 * cleanoutDays by the version's mtime, which simple keeps from the original file, so a version of a
 * file last changed long ago went at the next cleanout, a minute after it was made. The age is now the
 * archive moment in the version's tag, and `keep` holds at each cleanout too, as in v1.22.
 */

/** simple.go's default `keep`, where the param does not read as an integer. */
export const DEFAULT_KEEP = 5;

/** v1.22 simple.go toRemove: all but the newest `keep`, then those tagged more than cleanoutDays ago. */
export function simpleToRemove(
  versions: readonly string[],
  now: Date,
  keep: number,
  cleanoutDays: number,
): string[] {
  const sorted = sortLikeGo(versions);
  const excess = Math.max(0, sorted.length - keep);
  const remove = sorted.slice(0, excess);
  if (cleanoutDays <= 0) return remove;
  const maxAgeMs = cleanoutDays * 24 * 3600 * 1000;
  for (const version of sorted.slice(excess)) {
    const versionTime = parseTag(extractTag(version));
    if (versionTime && now.getTime() - versionTime.getTime() > maxAgeMs) remove.push(version);
  }
  return remove;
}
