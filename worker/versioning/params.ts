/*
 * Versioning params are strings (lib/config/versioningconfiguration.go), read with Go's strconv.Atoi
 * or ParseInt(s, 10, 0) (lib/versioner/simple.go, trashcan.go, staggered.go): an optional sign and
 * decimal digits within int64, nothing else (" 5", "5.0" and "" fail), a failure meaning the default.
 */

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** The integer Go's strconv.Atoi reads in `text`, or undefined where it fails. */
export function goAtoi(text: string | undefined): number | undefined {
  if (text === undefined || !/^[+-]?[0-9]+$/.test(text)) return undefined;
  const value = BigInt(text);
  return value < INT64_MIN || value > INT64_MAX ? undefined : Number(value);
}
