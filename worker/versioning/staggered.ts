import { extractTag, parseTag, sortLikeGo } from './tags.ts';
/*
 * lib/versioner/staggered.go (v1.19.2): tagged versions, thinned after each archive and at each
 * cleanout so that fewer are kept the older they are, none older than maxAge.
 */

/** staggered.go's default maxAge, in seconds (365 days); 0 or less keeps versions forever. */
export const DEFAULT_MAX_AGE = 31536000;

interface Interval {
  step: number;
  end: number;
}

const intervalsFor = (maxAge: number): Interval[] => [
  { step: 30, end: 60 * 60 }, // the first hour: one version every 30 s
  { step: 60 * 60, end: 24 * 60 * 60 }, // the first day: one an hour
  { step: 24 * 60 * 60, end: 30 * 24 * 60 * 60 }, // the first 30 days: one a day
  { step: 7 * 24 * 60 * 60, end: maxAge }, // then one a week, up to maxAge
];

/**
 * staggered.go toRemove: which of one file's versions (names) to remove at `now`. Oldest first, each is
 * compared with the last one kept, by the step of its own age's interval; the oldest in each step
 * survives; past maxAge (strictly) all go; a name whose tag is not a time is kept. Ages are whole
 * seconds, truncated, as Go's int64(d.Seconds()).
 */
export function staggeredToRemove(
  versions: readonly string[],
  now: Date,
  maxAge = DEFAULT_MAX_AGE,
): string[] {
  const intervals = intervalsFor(maxAge);
  const last = intervals[intervals.length - 1] as Interval;
  const remove: string[] = [];
  let previousAge = 0;
  let first = true;
  for (const version of sortLikeGo(versions)) {
    const versionTime = parseTag(extractTag(version));
    if (!versionTime) continue;
    const age = Math.trunc((now.getTime() - versionTime.getTime()) / 1000);
    if (last.end > 0 && age > last.end) {
      remove.push(version);
      continue;
    }
    if (first) {
      previousAge = age;
      first = false;
      continue;
    }
    // Go's `for _, usedInterval = range` leaves the last one when none fits.
    const used = intervals.find((interval) => age < interval.end) ?? last;
    if (previousAge - age < used.step) {
      remove.push(version);
      continue;
    }
    previousAge = age;
  }
  return remove;
}
