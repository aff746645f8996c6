/*
 * Errors worded as Syncthing words them: lib/versioner/versioner.go wraps every error of a versioner
 * as `<type> versioner: <op>: <reason>`, and the REST answers and pull errors show that text as is.
 */

export type VersioningOp = 'archive' | 'get versions' | 'restore' | 'clean';

export class VersioningError extends Error {
  override name = 'VersioningError';
}

/** The error of `op` on a versioner of `type`, keeping the error that caused it. */
export function versioningError(type: string, op: VersioningOp, error: unknown): VersioningError {
  return new VersioningError(`${type} versioner: ${op}: ${reasonOf(error)}`, { cause: error });
}

/** Runs `operation`, its failure worded as a failure of `op` on a versioner of `type`. */
export async function asOperation<T>(
  type: string,
  op: VersioningOp,
  operation: () => Promise<T>,
): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    throw error instanceof VersioningError ? error : versioningError(type, op, error);
  }
}

/**
 * `what` failed with `error`: a system error is told by its description alone ("no such file or
 * directory"), as Go's PathError does, since Node's message names paths under /proc/self/fd that say
 * nothing to whoever reads it.
 */
export function failed(what: string, error: unknown): Error {
  return new Error(`${what}: ${reasonOf(error)}`, { cause: error });
}

function reasonOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as NodeJS.ErrnoException).code;
  if (typeof code === 'string' && error.message.startsWith(`${code}: `)) {
    const description = error.message.slice(code.length + 2);
    const comma = description.indexOf(', ');
    return comma < 0 ? description : description.slice(0, comma);
  }
  return error.message;
}
