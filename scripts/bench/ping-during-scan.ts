// How long pings wait while syncd indexes a tree from scratch: the worker's own thread answers HTTP
// while its hashing threads take every core. `node --import tsx scripts/bench/ping-during-scan.ts`
// (after npm run build): three scans of 3,000 files of 4 KiB and two of 150 MiB, a ping every 5 ms.
import { untilPong } from './measure.ts';
import { indexFromScratch, makeTree, rest, untilServing, warm } from './scan.ts';
import { syncd } from './targets.ts';

const SMALL = 3000;
const LARGE = 2;

const tree = await makeTree(SMALL, LARGE, 150);
const waits: number[] = [];
try {
  for (let round = 0; round < 3; round++) {
    await warm(tree, SMALL, LARGE);
    const running = await syncd.start();
    try {
      await untilPong(running, 30_000);
      // Only the scan's pings: from when the worker holds the index, as indexFromScratch times it.
      await untilServing(running);
      let scanning = true;
      const pinger = (async () => {
        while (scanning) {
          const at = performance.now();
          await rest(running, 'GET', '/rest/system/ping');
          waits.push(performance.now() - at);
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      })();
      await indexFromScratch(running, tree).finally(() => (scanning = false));
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
