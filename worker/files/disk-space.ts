import { statfs } from 'node:fs/promises';
import { dirname } from 'node:path';

/** Syncthing's Size: a value with a unit, `%` of the disk or bytes with an SI prefix (`kB`, `MB`…). */
export interface DiskSpace {
  value: number;
  unit: string;
}

const PREFIXES: Record<string, number> = { k: 1e3, m: 1e6, g: 1e9, t: 1e12 };

/**
 * The free space of a folder's disk, as a pull takes it file by file (Syncthing's
 * CheckAvailableSpace, in its words: lib/config/folderconfiguration.go and size.go): a file must fit,
 * with `minFree` left free after it. The disk is asked at most once a second, and what the files
 * let through since are counted as taken, so that files pulled at once do not each count the same
 * free space.
 */
export class FreeSpace {
  readonly #root: string;
  readonly #minFree: DiskSpace | undefined;
  readonly #description: string;
  #reading: Promise<{ free: number; total: number } | undefined> | undefined;
  #readAt = 0;
  #taken = 0;

  constructor(root: string, minFree: DiskSpace | undefined, description: string) {
    this.#root = root;
    this.#minFree = minFree;
    this.#description = description;
  }

  /**
   * Why `required` more bytes do not fit, or undefined (then they count as taken). With no minFree
   * (0), nothing is checked, as in Syncthing: the writes themselves meet a full disk.
   */
  async problem(required: number): Promise<string | undefined> {
    if (!this.#minFree || this.#minFree.value <= 0) return undefined;
    if (!this.#reading || Date.now() - this.#readAt > READ_EVERY_MS) {
      this.#readAt = Date.now();
      this.#taken = 0;
      this.#reading = statfs(this.#root).then(
        (usage) => ({ free: usage.bavail * usage.bsize, total: usage.blocks * usage.bsize }),
        // Where the disk cannot be asked, nothing is refused.
        () => undefined,
      );
    }
    const usage = await this.#reading;
    if (!usage) return undefined;
    const problem = shortOf(usage.free - this.#taken, usage.total, required, this.#minFree);
    if (problem) return `insufficient space in folder ${this.#description} (${this.#root}): ${problem}`;
    this.#taken += required;
    return undefined;
  }
}

const READ_EVERY_MS = 1000;

function shortOf(
  free: number,
  total: number,
  required: number,
  minFree: DiskSpace | undefined,
): string | undefined {
  if (free < required) return `current ${formatSI(free)}B < required ${formatSI(required)}B`;
  if (!minFree || minFree.value <= 0) return undefined;
  const left = free - required;
  const wanted = `${minFree.value} ${minFree.unit}`;
  if (minFree.unit.includes('%')) {
    const percent = total > 0 ? (left / total) * 100 : 100;
    return percent < minFree.value ? `current ${percent.toFixed(2)} % < required ${wanted}` : undefined;
  }
  const base = minFree.value * (PREFIXES[minFree.unit.slice(0, 1).toLowerCase()] ?? 1);
  return left < base ? `current ${formatSI(left)}B < required ${wanted}` : undefined;
}

// Syncthing's formatSI: bytes with a decimal prefix and one decimal.
function formatSI(bytes: number): string {
  if (bytes < 1e3) return `${bytes} `;
  for (const [limit, prefix] of [
    [1e6, 'K'],
    [1e9, 'M'],
    [1e12, 'G'],
  ] as const) {
    if (bytes < limit) return `${(bytes / (limit / 1e3)).toFixed(1)} ${prefix}`;
  }
  return `${(bytes / 1e12).toFixed(1)} T`;
}

/**
 * Why the disk of the home, where the index is, has too little space left for the folders to go on
 * (Syncthing's minHomeDiskFree check, lib/model/folder.go getHealthErrorWithoutIgnores, in its words),
 * or undefined. Where the disk cannot be asked, nothing is refused.
 */
export async function homeSpaceProblem(
  index: string,
  minFree: DiskSpace | undefined,
): Promise<string | undefined> {
  if (!minFree || minFree.value <= 0) return undefined;
  const usage = await statfs(dirname(index)).then(
    (found) => ({ free: found.bavail * found.bsize, total: found.blocks * found.bsize }),
    () => undefined,
  );
  const problem = usage && shortOf(usage.free, usage.total, 0, minFree);
  return problem ? `insufficient space on disk for database (${index}): ${problem}` : undefined;
}
