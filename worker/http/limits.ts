// Header limits: 16 KiB in all, and at most 100 header lines. Node checks the size only roughly for
// many short lines, and drops lines past its count silently: both are checked for every request.
export const MAX_HEADER_BYTES = 16 * 1024;
export const MAX_HEADER_COUNT = 100;
