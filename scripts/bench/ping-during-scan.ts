// How long pings wait while syncd indexes a tree from scratch: the worker's own thread answers HTTP
// while its hashing threads take every core. `node --import tsx scripts/bench/ping-during-scan.ts`
// (after npm run build): three scans of 3,000 files of 4 KiB and two of 150 MiB, a ping every 5 ms.
import { untilPong } from './measure.ts';
import { makeTree, warm } from './scan.ts';
import { type Running, syncd } from './targets.ts';

const SMALL = 3000;
const LARGE = 2;

async function call(running: Running, method: string, path: string, body?: unknown) {
  const response = await fetch(`${running.url}${path}`, {
    method,
    headers: { 'X-API-Key': running.apiKey, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json().catch(() => undefined)) as unknown };
}

const tree = await makeTree(SMALL, LARGE, 150);
const waits: number[] = [];
try {
  for (let round = 0; round < 3; round++) {
    await warm(tree, SMALL, LARGE);
    const running = await syncd.start();
    try {
      await untilPong(running, 30_000);
      // Timed from when the worker holds the index, as the scan bench is.
      for (const until = performance.now() + 30_000; ; await new Promise((r) => setTimeout(r, 5))) {
        if ((await call(running, 'GET', '/rest/db/completion')).status === 200) break;
        if (performance.now() > until) throw new Error('the service did not take its index within 30 s');
      }
      let scanning = true;
      const pinger = (async () => {
        while (scanning) {
          const at = performance.now();
          await call(running, 'GET', '/rest/system/ping');
          waits.push(performance.now() - at);
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      })();
      await call(running, 'POST', '/rest/config/folders', {
        id: 'bench',
        path: tree.path,
        fsWatcherEnabled: false,
        rescanIntervalS: 3600,
      });
      for (;;) {
        const status = (await call(running, 'GET', '/rest/db/status?folder=bench')).body as {
          state?: string;
          localFiles?: number;
        };
        if (status.state === 'idle' && status.localFiles === tree.files) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      scanning = false;
      await pinger;
    } finally {
      await running.stop();
    }
  }
} finally {
  await tree.remove();
}
waits.sort((a, b) => a - b);
const at = (share: number) =>
  (waits[Math.min(waits.length - 1, Math.floor(waits.length * share))] ?? 0).toFixed(1);
process.stdout.write(
  `pings during 3 scans: ${waits.length}; median ${at(0.5)} ms, 90th percentile ${at(0.9)}, 99th ${at(0.99)}, longest ${at(1)}\n`,
);
