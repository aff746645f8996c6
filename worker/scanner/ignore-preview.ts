import type { IgnorePreview } from '../../shared/api-types.ts';
import type { Ignores } from './ignores.ts';
import { walk } from './walk.ts';

/** What a set of ignore patterns would leave out of a folder, for the web GUI's ignore editor. */
export type { IgnorePreview };

/** Names looked at before a preview stops: a large folder is previewed in part, quickly. */
export const LOOKED_AT_MOST = 20_000;
/** Ignored names listed in the answer; the rest are counted. */
export const SHOWN_IGNORED = 200;

/**
 * Walks the folder as a scan does with `ignores` (the same walk, through the folder's files, never
 * through a symlinked parent; an ignored directory is not entered unless a `!` pattern may take
 * something below it), and tells which names they ignore. Nothing is written: names not in NFC form
 * are passed over, not renamed, and old temporary files are left where they are.
 */
export async function previewIgnores(
  root: string,
  ignores: Ignores,
  options: { markerName?: string; limit?: number } = {},
): Promise<IgnorePreview> {
  const limit = options.limit ?? LOOKED_AT_MOST;
  const preview: IgnorePreview = { ignored: [], total: 0, scanned: 0, truncated: false };
  const onName = (name: string, ignored: boolean) => {
    if (preview.scanned >= limit) {
      preview.truncated = true;
      return false;
    }
    preview.scanned += 1;
    if (ignored) {
      preview.total += 1;
      if (preview.ignored.length < SHOWN_IGNORED) preview.ignored.push(name);
    }
    return true;
  };
  const walking = walk(root, {
    markerName: options.markerName,
    ignores,
    autoNormalize: false,
    problems: [],
    unreadable: new Set(),
    onName,
  });
  for await (const _slice of walking) {
    // The names were counted as they were met.
  }
  return preview;
}
