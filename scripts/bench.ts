// `npm run bench`: measures syncd against its targets and, when it is installed, Syncthing in the same
// run, and prints a markdown report for BENCHMARKS.md. Not part of `npm test`: on shared machines the
// absolute figures move from run to run, so compare the ratios taken in one run.
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  emptyNodeRss,
  endurance,
  has,
  idleRss,
  median,
  restartsUnderLoad,
  serviceGap,
  shutdownToExit,
  startToPong,
  throughput,
  untilPong,
} from './bench/measure.ts';
import { makeTree, type ScanFigures, scanBench, warm } from './bench/scan.ts';
import {
  bareNode,
  directApp,
  handoffLimit,
  handoffLimitViaNpm,
  heldLimit,
  syncd,
  syncdInOneHome,
  syncdViaNpm,
  syncthing,
  type Target,
} from './bench/targets.ts';

const { values } = parseArgs({
  options: {
    restarts: { type: 'string', default: '20' },
    runs: { type: 'string', default: '5' },
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    quick: { type: 'boolean', default: false },
    // Restarts in a row, alone: `npm run bench -- --endurance 1000`.
    endurance: { type: 'string' },
    // The service's handover alone: `npm run bench -- --service-gap 50`.
    'service-gap': { type: 'string' },
    // Indexing alone: `npm run bench -- --scan`.
    scan: { type: 'boolean', default: false },
    // Connecting alone: `npm run bench -- --connect`.
    connect: { type: 'boolean', default: false },
    // Moving a folder between devices alone: `npm run bench -- --sync`.
    sync: { type: 'boolean', default: false },
    // A file larger than the memory syncd may use, moved to and from it: `npm run bench -- --sync-memory`.
    'sync-memory': { type: 'boolean', default: false },
    // Its file's size and syncd's limit, in MiB (default 4096 and 512; --quick 768 and 384).
    'memory-file': { type: 'string' },
    'memory-limit': { type: 'string' },
    // The control plane alone (start-up, restarts, throughput, memory): `npm run bench -- --control`.
    control: { type: 'boolean', default: false },
    // What hostile devices cost the worker (memory, pings), alone: `npm run bench -- --hostile`.
    hostile: { type: 'boolean', default: false },
  },
});

if (values.endurance) {
  const count = Number(values.endurance);
  const started = performance.now();
  const result = await endurance(syncd, count);
  const seconds = ((performance.now() - started) / 1000).toFixed(0);
  process.stdout.write(
    `${result.done} of ${count} API restarts in a row in ${seconds} s; afterwards the service is ${result.up ? 'up' : 'DOWN'}, ` +
      `counting ${result.restarts} restarts and ${result.crashes} crashes\n`,
  );
  process.exit(result.up && result.done === count ? 0 : 1);
}
if (values['service-gap']) {
  const gaps = (await serviceGap(Number(values['service-gap']))).sort((a, b) => a - b);
  process.stdout.write(
    `${gaps.length} API restarts: no worker held the service for ${median(gaps)} ms (median), ${gaps.at(-1)} ms at most\n`,
  );
  process.exit(0);
}
const quick = values.quick;
const log = (text: string) => process.stderr.write(`${text}\n`);
const withSyncthing = await has('syncthing');
const services: Target[] = withSyncthing ? [syncd, syncthing] : [syncd];
const restarts = quick ? 3 : Number(values.restarts);
const runs = quick ? 2 : Number(values.runs);
const seconds = quick ? 2 : Number(values.seconds);
const rounds = quick ? 1 : Number(values.rounds);
// Syncthing's monitor gives up for good after 4 starts within 60 s, restarts asked for included.
const SYNCTHING_RESTARTS = 3;

const rows: string[][] = [];
const row = (what: string, figures: Record<string, string>, target: string, verdict: string) =>
  rows.push([what, figures.syncd ?? '', figures.syncthing ?? '–', figures.ratio ?? '', target, verdict]);
const fmt = (n: number, digits = 0) => n.toFixed(digits);
const ratio = (a: number, b: number | undefined) => (b ? `${fmt(a / b, 2)}×` : '');
const verdict = (ok: boolean, miss: string) => (ok ? 'met' : `missed: ${miss}`);
/** syncd's figure beside Syncthing's, when there is one, and their ratio. */
const compare = (ours: number, theirs: number | undefined, digits = 0) => ({
  syncd: fmt(ours, digits),
  syncthing: theirs === undefined ? '–' : fmt(theirs, digits),
  ratio: ratio(ours, theirs),
});

// 6. Indexing a tree from scratch, and rescanning it unchanged (see scripts/bench/scan.ts).
async function scanRows(): Promise<void> {
  const [small, large, largeMiB] = quick ? [500, 1, 50] : [3000, 2, 150];
  log(`a tree of ${small} files of 4 KiB and ${large} of ${largeMiB} MiB`);
  const tree = await makeTree(small, large, largeMiB);
  try {
    // A single scan moves by 10 to 30 % on this kind of machine: several rounds, the services
    // alternating, and each figure the median of its rounds.
    const scanRounds = quick ? 1 : 5;
    const each: Record<string, ScanFigures[]> = {};
    for (let round = 0; round < scanRounds; round++) {
      for (const service of services) {
        await warm(tree, small, large);
        log(`indexing, round ${round + 1} of ${scanRounds}: ${service.name}`);
        (each[service.name] ??= []).push(await scanBench(service, tree));
      }
    }
    const figures = Object.fromEntries(
      Object.entries(each).map(([name, list]) => [name, medianFigures(list)]),
    );
    const ours = figures.syncd as ScanFigures;
    const theirs = figures.syncthing;
    const mib = fmt(tree.bytes / 2 ** 20);
    const runsOf = (name: string) => each[name]?.map((figure) => fmt(figure.initialMs)).join(', ');
    log(`from scratch (ms): syncd ${runsOf('syncd')}; Syncthing ${runsOf('syncthing') ?? '–'}`);
    row(
      `index ${tree.files} files, ${mib} MiB, from scratch, page cache warm, median of ${scanRounds} (ms)`,
      compare(ours.initialMs, theirs?.initialMs),
      '≤ Syncthing',
      theirs
        ? verdict(ours.initialMs <= theirs.initialMs, `${fmt(ours.initialMs / theirs.initialMs, 2)}×`)
        : 'no Syncthing to compare',
    );
    row(
      `rescan with nothing changed, median of ${scanRounds} rounds' medians of 3 (ms)`,
      compare(ours.rescanMs, theirs?.rescanMs, 1),
      '≤ Syncthing',
      theirs
        ? verdict(ours.rescanMs <= theirs.rescanMs, `${fmt(ours.rescanMs / theirs.rescanMs, 2)}×`)
        : 'no Syncthing to compare',
    );
    row(
      'worker RSS during that scan, largest / after (MB; Syncthing: Go sys)',
      {
        syncd: `${fmt(ours.peakRssMb ?? 0)} / ${fmt(ours.afterRssMb ?? 0)}`,
        syncthing: theirs ? `${fmt(theirs.peakRssMb ?? 0)} / ${fmt(theirs.afterRssMb ?? 0)}` : '–',
        ratio: '',
      },
      '',
      '',
    );
  } finally {
    await tree.remove();
  }
  if (quick) return;
  const many = 100_000;
  log(`a tree of ${many} files of 4 KiB`);
  const big = await makeTree(many, 0, 0);
  try {
    const figures: Record<string, ScanFigures> = {};
    for (const service of services) {
      log(`indexing ${many} files: ${service.name}`);
      figures[service.name] = await scanBench(service, big, 1);
    }
    const ours = figures.syncd as ScanFigures;
    const theirs = figures.syncthing;
    row(`index ${many} files of 4 KiB from scratch (ms)`, compare(ours.initialMs, theirs?.initialMs), '', '');
    row(
      `worker RSS while indexing ${many} files, largest / after (MB; Syncthing: Go sys)`,
      {
        syncd: `${fmt(ours.peakRssMb ?? 0)} / ${fmt(ours.afterRssMb ?? 0)}`,
        syncthing: theirs ? `${fmt(theirs.peakRssMb ?? 0)} / ${fmt(theirs.afterRssMb ?? 0)}` : '–',
        ratio: '',
      },
      'bounded',
      '',
    );
  } finally {
    await big.remove();
  }
}

/** Each figure's median over rounds; memory the largest seen. */
function medianFigures(list: ScanFigures[]): ScanFigures {
  const largest = (pick: (figure: ScanFigures) => number | undefined) => {
    const seen = list.map(pick).filter((value): value is number => value !== undefined);
    return seen.length ? Math.max(...seen) : undefined;
  };
  return {
    initialMs: median(list.map((figure) => figure.initialMs)),
    rescanMs: median(list.map((figure) => figure.rescanMs)),
    peakRssMb: largest((figure) => figure.peakRssMb),
    afterRssMb: largest((figure) => figure.afterRssMb),
  };
}

// 7. From a device being added to it being connected (see scripts/bench/connect.ts).
async function connectRows(): Promise<void> {
  if (!withSyncthing) return;
  const connectRounds = quick ? 2 : 5;
  log(`device added to connected, ${connectRounds} rounds each`);
  const { connectBench } = await import('./bench/connect.ts');
  const times = await connectBench(connectRounds);
  const [ours, theirs] = [median(times.syncd), median(times.syncthing)];
  row(
    `a device added to it connected, median of ${connectRounds} (ms)`,
    compare(ours, theirs),
    '',
    `syncd ${times.syncd.map((ms) => fmt(ms)).join(', ')}; Syncthing ${times.syncthing.map((ms) => fmt(ms)).join(', ')}`,
  );
}

// 8. Moving a folder between devices (see scripts/bench/sync.ts).
async function syncRows(): Promise<void> {
  if (!withSyncthing) return;
  const [small, largeMiB] = quick ? [300, 50] : [2000, 300];
  log(`moving ${small} files of 4 KiB and one of ${largeMiB} MiB between devices`);
  const tree = await makeTree(small, 1, largeMiB);
  try {
    const { syncBench } = await import('./bench/sync.ts');
    const times = await syncBench(tree, quick ? 1 : 5);
    const what = `${tree.files} files, ${fmt(tree.bytes / 2 ** 20)} MiB, median of ${times.runs.toSyncd.length}`;
    process.stderr.write(`runs (ms): ${JSON.stringify(times.runs)}\n`);
    row(
      `${what}, Syncthing to syncd (ms; Syncthing: to Syncthing)`,
      compare(times.toSyncd, times.syncthing),
      '≤ Syncthing',
      verdict(times.toSyncd <= times.syncthing, `${fmt(times.toSyncd / times.syncthing, 2)}×`),
    );
    row(
      `${what}, syncd to Syncthing (ms; Syncthing: to Syncthing)`,
      compare(times.fromSyncd, times.syncthing),
      '≤ Syncthing',
      verdict(times.fromSyncd <= times.syncthing, `${fmt(times.fromSyncd / times.syncthing, 2)}×`),
    );
    row(
      "syncd's worker RSS while it pulled, largest (MB)",
      { syncd: fmt(times.pullRssMb), syncthing: '–', ratio: '' },
      'bounded',
      '',
    );
  } finally {
    await tree.remove();
  }
}

// 9. A file larger than the memory syncd may use (see memoryBench in scripts/bench/sync.ts).
async function syncMemoryRows(): Promise<void> {
  if (!withSyncthing) return;
  const [fileMiB, limitMiB] = [
    Number(values['memory-file'] ?? (quick ? 768 : 4096)),
    Number(values['memory-limit'] ?? (quick ? 384 : 512)),
  ];
  log(`moving one file of ${fileMiB} MiB to and from syncd, its processes limited to ${limitMiB} MiB`);
  const tree = await makeTree(0, 1, fileMiB);
  try {
    const { memoryBench } = await import('./bench/sync.ts');
    const figures = await memoryBench(tree, limitMiB);
    process.stderr.write(`${JSON.stringify(figures)}\n`);
    const limit =
      figures.limitMiB === undefined ? 'no memory cgroup, no limit' : `limit ${figures.limitMiB} MiB`;
    const survived = figures.oomKills === 0 && !figures.workerReplaced && figures.intact;
    const outcome =
      `${figures.oomKills} killed for memory, worker ${figures.workerReplaced ? 'replaced' : 'the same'}, ` +
      (figures.failure ?? `copies ${figures.intact ? 'intact' : 'DIFFER'}`);
    const directions = [
      [`one file of ${fmt(figures.fileMiB)} MiB, Syncthing to syncd`, figures.toSyncdMs, figures.pullRssMb],
      ['the same file, syncd to Syncthing', figures.fromSyncdMs, figures.serveRssMb],
    ] as const;
    for (const [what, ms, rssMb] of directions) {
      row(
        `${what} (${limit}): time (ms), worker's largest RSS (MB)`,
        { syncd: `${fmt(ms)}, ${fmt(rssMb)} MB`, syncthing: '–', ratio: '' },
        'bounded',
        `${survived ? 'met' : 'missed'}: ${outcome}`,
      );
    }
  } finally {
    await tree.remove();
  }
}

if (values.hostile) {
  const { hostileBench } = await import('./bench/hostile.ts');
  process.stdout.write(`${(await hostileBench(log)).join('\n')}\n`);
  process.exit(0);
}

if (values['sync-memory']) {
  await syncMemoryRows();
  process.stdout.write(`${rows.map((cells) => `| ${cells.join(' | ')} |`).join('\n')}\n`);
  process.exit(0);
}

if (values.sync) {
  await syncRows();
  process.stdout.write(`${rows.map((cells) => `| ${cells.join(' | ')} |`).join('\n')}\n`);
  process.exit(0);
}

if (values.connect) {
  await connectRows();
  process.stdout.write(`${rows.map((cells) => `| ${cells.join(' | ')} |`).join('\n')}\n`);
  process.exit(0);
}

if (values.scan) {
  await scanRows();
  process.stdout.write(`${rows.map((cells) => `| ${cells.join(' | ')} |`).join('\n')}\n`);
  process.exit(0);
}

// 1. Process start to first pong: syncd beside the handoff prototype of its design (the floor) and
// Syncthing; in a new home (the identity is made), in a home used before (a container's restart), and
// through npm start (as containers run it).
const startMedian = async (target: Target) => {
  const times = [];
  for (let i = 0; i < runs; i++) times.push(await startToPong(target));
  return median(times);
};
const start: Record<string, number> = {};
const keptHome = await mkdtemp(join(tmpdir(), 'syncd-bench-kept-'));
try {
  const starts: Target[] = [
    ...services,
    handoffLimit,
    syncdInOneHome(keptHome),
    syncdViaNpm,
    handoffLimitViaNpm,
  ];
  // The kept home is made by a first start that is not counted.
  await startToPong(syncdInOneHome(keptHome));
  for (const target of starts) {
    log(`start to first pong: ${target.name}`);
    start[target.name] = await startMedian(target);
  }
} finally {
  await rm(keptHome, { recursive: true, force: true });
}
const floor = start[handoffLimit.name]!;
const startRow = (what: string, ours: number, theirs: number, goal: number, reference: string) =>
  row(
    what,
    { syncd: fmt(ours), syncthing: `${reference} ${fmt(theirs)}`, ratio: ratio(ours, theirs) },
    `≤ ${goal}× the prototype`,
    verdict(ours <= goal * theirs, `${fmt(ours / theirs, 2)}×`),
  );
row(
  `\`syncd serve\` to first pong, new home, median of ${runs} (ms)`,
  compare(start.syncd!, start.syncthing),
  '',
  '',
);
startRow(
  `\`syncd serve\` to first pong against the handoff prototype, new home (ms)`,
  start.syncd!,
  floor,
  1.3,
  'prototype',
);
startRow(
  '`syncd serve` to first pong against the handoff prototype, home used before (ms)',
  start['syncd, home used before']!,
  floor,
  1.3,
  'prototype',
);
startRow(
  '`npm start` to first pong against the prototype through `npm start` (ms)',
  start[syncdViaNpm.name]!,
  start[handoffLimitViaNpm.name]!,
  1.15,
  'prototype',
);

// 2. Restarts under load.
log(`${restarts} restarts under load: syncd`);
const ours = await restartsUnderLoad(syncd, restarts);
let theirs: Awaited<ReturnType<typeof restartsUnderLoad>> | undefined;
if (withSyncthing) {
  log(`${SYNCTHING_RESTARTS} restarts under load: syncthing`);
  theirs = await restartsUnderLoad(syncthing, SYNCTHING_RESTARTS);
}
const pingsOf = (r: typeof ours | undefined) => (r ? `${r.failed} of ${r.pings}` : '–');
row(
  `failed pings across restarts (syncd ${ours.restarts}, Syncthing ${theirs?.restarts ?? 0})`,
  { syncd: pingsOf(ours), syncthing: theirs ? `${pingsOf(theirs)} (${theirs.failures.join(', ')})` : '–' },
  '0',
  verdict(ours.failed === 0 && ours.survived, `${ours.failed} failed (${ours.failures.join(', ')})`),
);
row(
  'worst answered ping during restarts (ms)',
  compare(ours.worstMs, theirs?.worstMs),
  '≤ 200',
  verdict(ours.worstMs <= 200, `${fmt(ours.worstMs - 200)} ms over`),
);
row('99th-percentile answered ping during restarts (ms)', compare(ours.p99Ms, theirs?.p99Ms, 1), '', '');
row(
  'restart request to the new process answering, median (ms)',
  compare(ours.restartToPongMs, theirs?.restartToPongMs),
  '',
  '',
);

log(`${restarts} restarts: the service's handover`);
const gaps = (await serviceGap(restarts)).sort((x, y) => x - y);
row(
  `no worker holds the service during a restart, median and max of ${restarts} (ms)`,
  { syncd: `${median(gaps)}, ${gaps.at(-1)}`, syncthing: '–', ratio: '' },
  '',
  '',
);

// 3. Shutdown of an idle service to process exit.
const stop: Record<string, number> = {};
for (const service of services) {
  log(`shutdown to exit: ${service.name}`);
  const times = [];
  for (let i = 0; i < runs; i++) times.push(await shutdownToExit(service));
  stop[service.name] = median(times);
}
row(
  `shutdown request to exit, idle, median of ${runs} (ms)`,
  compare(stop.syncd!, stop.syncthing),
  '≤ 150',
  verdict(stop.syncd! <= 150, `${fmt(stop.syncd! - 150)} ms over`),
);

// 4. Ping throughput, every server up at once and measured in turns, so that each round sees the same machine.
const servers = [...services, bareNode, directApp, handoffLimit, heldLimit];
const running = await Promise.all(servers.map((server) => server.start()));
await Promise.all(running.map((r) => untilPong(r, 30_000)));
const rps: Record<string, number[]> = {};
let tool = '';
for (let round = 0; round < rounds; round++) {
  for (const [i, server] of servers.entries()) {
    if (server === handoffLimit || server === heldLimit) continue;
    log(`throughput round ${round + 1}: ${server.name}`);
    const result = await throughput(running[i]!, seconds);
    tool = result.tool;
    (rps[server.name] ??= []).push(result.rps);
  }
}
// A new connection per ping (wrk -H 'Connection: close', 8 connections): what accepting and handing
// each connection over costs, against both prototypes of the design and Syncthing.
const fresh: Record<string, number[]> = {};
let freshTool = '';
for (let round = 0; round < rounds; round++) {
  for (const [i, server] of servers.entries()) {
    log(`new-connection throughput round ${round + 1}: ${server.name}`);
    const result = await throughput(running[i]!, seconds, false, 8);
    freshTool = result.tool;
    (fresh[server.name] ??= []).push(result.rps);
  }
}
await Promise.all(running.map((r) => r.stop()));
const tput = Object.fromEntries(Object.entries(rps).map(([name, values]) => [name, median(values)]));
const ofBare = tput.syncd! / tput['node:http']!;
row(
  `keep-alive pings, ${tool}, ${seconds} s, median of ${rounds} (requests/s)`,
  compare(tput.syncd!, tput.syncthing),
  '≥ Syncthing',
  withSyncthing
    ? verdict(tput.syncd! >= tput.syncthing!, `${fmt(tput.syncd! / tput.syncthing!, 2)}×`)
    : 'no Syncthing to compare',
);
row(
  'keep-alive pings against a bare node:http server answering the same bytes',
  { syncd: fmt(tput.syncd!), syncthing: `node:http ${fmt(tput['node:http']!)}`, ratio: `${fmt(ofBare, 2)}×` },
  '≥ 0.9×',
  verdict(ofBare >= 0.9, `${fmt(ofBare, 2)}×`),
);
row(
  'keep-alive pings of the same app listening itself, without the handoff',
  {
    syncd: fmt(tput.syncd!),
    syncthing: `direct ${fmt(tput['syncd app, no handoff']!)}`,
    ratio: `${fmt(tput.syncd! / tput['syncd app, no handoff']!, 2)}×`,
  },
  '',
  '',
);
const freshOf = (name: string) => median(fresh[name] ?? []);
row(
  `pings on a new connection each, ${freshTool} -H 'Connection: close', median of ${rounds} (requests/s)`,
  compare(freshOf('syncd'), withSyncthing ? freshOf('syncthing') : undefined),
  '≥ Syncthing',
  withSyncthing
    ? verdict(freshOf('syncd') >= freshOf('syncthing'), `${fmt(freshOf('syncd') / freshOf('syncthing'), 2)}×`)
    : 'no Syncthing to compare',
);
for (const [name, what] of [
  [handoffLimit.name, 'the handoff prototype (the same design)'],
  [heldLimit.name, 'the held-socket prototype (each worker accepts)'],
  [directApp.name, 'the same app listening itself'],
  [bareNode.name, 'a bare node:http server listening itself (the floor of any Node server)'],
] as const) {
  row(
    `pings on a new connection each, against ${what}`,
    {
      syncd: fmt(freshOf('syncd')),
      syncthing: fmt(freshOf(name)),
      ratio: ratio(freshOf('syncd'), freshOf(name)),
    },
    '',
    '',
  );
}

if (!values.control) {
  await scanRows();
  await connectRows();
  await syncRows();
}

// 5. Idle memory, and the supervisor's after API restarts in a row.
const memory: Record<string, { parentMb: number; childMb: number }> = {};
for (const service of services) {
  log(`idle RSS: ${service.name}`);
  memory[service.name] = await idleRss(service);
}
const emptyMb = await emptyNodeRss();
row(
  'idle RSS, supervisor / monitor (MB)',
  {
    ...compare(memory.syncd!.parentMb, memory.syncthing?.parentMb, 1),
    ratio: `empty node ${fmt(emptyMb, 1)}`,
  },
  '≤ 50',
  verdict(memory.syncd!.parentMb <= 50, `${fmt(memory.syncd!.parentMb - 50, 1)} MB over`),
);
row(
  'idle RSS, worker / main process (MB)',
  compare(memory.syncd!.childMb, memory.syncthing?.childMb, 1),
  '',
  '',
);
const storm = quick ? 20 : 300;
log(`${storm} API restarts in a row: the supervisor's memory`);
const after = await endurance(syncd, storm);
const grown = after.rssAfterMb - after.rssBeforeMb;
row(
  `supervisor RSS idle, then after ${after.done} API restarts in a row (MB)`,
  { syncd: `${fmt(after.rssBeforeMb, 1)} → ${fmt(after.rssAfterMb, 1)}`, syncthing: '–', ratio: '' },
  '≤ idle + 10',
  verdict(grown <= 10 && after.done === storm, `+${fmt(grown, 1)} MB`),
);

const syncthingVersion = withSyncthing
  ? execFileSync('syncthing', ['--version'], { encoding: 'utf8' }).split(' (')[0]
  : 'not installed';
const lines = [
  `Run ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC; ${cpus().length} × ${cpus()[0]?.model.trim()}, ${fmt(totalmem() / 2 ** 30)} GiB;`,
  `Node ${process.version}; ${syncthingVersion}; restarts: syncd ${restarts}, Syncthing ${withSyncthing ? SYNCTHING_RESTARTS : 0}.`,
  '',
  '| measure | syncd | Syncthing | syncd / Syncthing | target | verdict |',
  '|---|---|---|---|---|---|',
  ...rows.map((cells) => `| ${cells.join(' | ')} |`),
];
process.stdout.write(`${lines.join('\n')}\n`);
