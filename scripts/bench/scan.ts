// Indexing a tree from scratch, and rescanning it unchanged, through each service's own REST interface:
// the same tree, the page cache warm, measured the same way for syncd and for Syncthing.
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Running, Target } from './targets.ts';
import { untilPong } from './measure.ts';

export interface Tree {
  path: string;
  files: number;
  bytes: number;
  remove(): Promise<void>;
}

/** `small` files of `smallBytes` in folders of 100, and `large` files of `largeMiB` each, of random bytes. */
export async function makeTree(
  small: number,
  large: number,
  largeMiB: number,
  smallBytes = 4096,
): Promise<Tree> {
  const path = await mkdtemp(join(tmpdir(), 'syncd-bench-tree-'));
  let bytes = 0;
  for (let i = 0; i < small; i++) {
    const dir = join(path, `d${Math.floor(i / 100)}`);
    if (i % 100 === 0) await mkdir(dir);
    await writeFile(join(dir, `f${i}`), randomBytes(smallBytes));
    bytes += smallBytes;
  }
  for (let i = 0; i < large; i++) {
    const chunk = randomBytes(1024 * 1024);
    await pipeline(
      function* () {
        for (let mib = 0; mib < largeMiB; mib++) yield chunk;
      },
      createWriteStream(join(path, `large${i}.bin`)),
    );
    bytes += largeMiB * 1024 * 1024;
  }
  return { path, files: small + large, bytes, remove: () => rm(path, { recursive: true, force: true }) };
}

/** Reads every file once, so that both services find them in the page cache. */
export async function warm(tree: Tree, small: number, large: number): Promise<void> {
  for (let i = 0; i < small; i++) await readFile(join(tree.path, `d${Math.floor(i / 100)}`, `f${i}`));
  for (let i = 0; i < large; i++) await readFile(join(tree.path, `large${i}.bin`));
}

export interface ScanFigures {
  /** From adding the folder to its status saying every file is indexed and the folder idle. */
  initialMs: number;
  /** A scan asked for with nothing changed, median. */
  rescanMs: number;
  /** syncd's worker (Syncthing's process, as Go's `sys`): largest during the scan, and after it. */
  peakRssMb: number | undefined;
  afterRssMb: number | undefined;
}

export async function scanBench(target: Target, tree: Tree, rescans = 3): Promise<ScanFigures> {
  const running = await target.start();
  try {
    await untilPong(running, 30_000);
    let peak = 0;
    const initialMs = await indexFromScratch(running, tree, async () => {
      const memory = await memoryMb(running);
      if (memory !== undefined) peak = Math.max(peak, memory);
    });
    const times: number[] = [];
    for (let i = 0; i < rescans; i++) {
      const at = performance.now();
      await rest(running, 'POST', '/rest/db/scan?folder=bench');
      times.push(performance.now() - at);
    }
    times.sort((a, b) => a - b);
    return {
      initialMs,
      rescanMs: times[Math.floor(times.length / 2)] as number,
      peakRssMb: peak || undefined,
      afterRssMb: await memoryMb(running),
    };
  } finally {
    await running.stop();
  }
}

/**
 * Adds `tree` as the folder `bench` and waits until its status says every file is indexed and the
 * folder idle (polled every 20 ms, `onPoll` at each); returns the milliseconds from the request. The
 * clock starts once the service serves /rest/db: syncd answers pings before its worker has taken the
 * index (it loads that code after ready), and Syncthing's API starts with its model.
 */
export async function indexFromScratch(
  running: Running,
  tree: Tree,
  onPoll: () => Promise<void> = async () => {},
): Promise<number> {
  await untilServing(running);
  const started = performance.now();
  const added = await rest(running, 'POST', '/rest/config/folders', {
    id: 'bench',
    path: tree.path,
    fsWatcherEnabled: false,
    rescanIntervalS: 3600,
  });
  if (added.status !== 200) throw new Error(`${running.url}: adding the folder answered ${added.status}`);
  for (;;) {
    const status = await rest(running, 'GET', '/rest/db/status?folder=bench');
    await onPoll();
    const body = status.body as { state?: string; localFiles?: number };
    if (status.status === 200 && body.state === 'idle' && body.localFiles === tree.files) break;
    if (performance.now() - started > 600_000) throw new Error(`${running.url}: the scan did not end`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return performance.now() - started;
}

export async function untilServing(running: Running): Promise<void> {
  for (const until = performance.now() + 30_000; performance.now() < until;) {
    if ((await rest(running, 'GET', '/rest/db/completion')).status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`${running.url}: GET /rest/db/completion did not answer 200 within 30 s`);
}

// syncd reports its worker's RSS; Syncthing what Go took from the system.
async function memoryMb(running: Running): Promise<number | undefined> {
  const status = (await rest(running, 'GET', '/rest/system/status')).body as {
    memory?: { rss: number };
    sys?: number;
  };
  const bytes = status.memory?.rss ?? status.sys;
  return bytes === undefined ? undefined : bytes / 2 ** 20;
}

export async function rest(running: Running, method: string, path: string, body?: unknown) {
  const response = await fetch(`${running.url}${path}`, {
    method,
    headers: { 'X-API-Key': running.apiKey, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not JSON: kept as text.
  }
  return { status: response.status, body: parsed };
}
