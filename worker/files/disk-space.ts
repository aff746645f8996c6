import { statfs } from 'node:fs/promises';

/** Syncthing's Size: a value with a unit, `%` of the disk or bytes with an SI prefix (`kB`, `MB`…). */
export interface DiskSpace {
  value: number;
  unit: string;
}

const PREFIXES: Record<string, number> = { k: 1e3, m: 1e6, g: 1e9, t: 1e12 };

/**
 * Why `required` more bytes do not fit on the disk of `root` (Syncthing's CheckAvailableSpace, in its
 * words: lib/config/folderconfiguration.go and size.go), or undefined when they do: the free space
 * must hold them, and keep `minFree` free after. Where the disk cannot be asked, nothing is refused.
 */
export async function spaceProblem(
  root: string,
  required: number,
  minFree: DiskSpace | undefined,
  description: string,
): Promise<string | undefined> {
  let free: number;
  let total: number;
  try {
    const usage = await statfs(root);
    free = usage.bavail * usage.bsize;
    total = usage.blocks * usage.bsize;
  } catch {
    return undefined;
  }
  const problem = shortOf(free, total, required, minFree);
  return problem && `insufficient space in folder ${description} (${root}): ${problem}`;
}

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
