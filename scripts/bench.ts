// `npm run bench`: measures syncd against its targets and, when it is installed, Syncthing in the same
// run; each suite that ran replaces its table in BENCHMARKS.md (scripts/bench/report-file.ts) and is
// printed. Not part of `npm test`: on shared machines the absolute figures move from run to run, so
// compare the ratios taken in one run.
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { packageRoot } from '../shared/paths.ts';
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
import { checkSections, writeSections } from './bench/report-file.ts';
import { type Measure, sectionTable, thisRun } from './bench/report-table.ts';
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

// Every Syncthing a suite starts removes its home on this process's exit (test/helpers/syncthing.ts):
// a run starts more than Node's ten listeners of one event without any leaking.
process.setMaxListeners(64);

const { values, tokens } = parseArgs({
  tokens: true,
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
    // 100,000 small files beside Syncthing (index, rescan, memory, disk, start, sending): `--many`.
    many: { type: 'boolean', default: false },
    // The same with 1,000,000 files, sending left out (about 10 GiB of disk): `--million`.
    million: { type: 'boolean', default: false },
    // A file larger than the memory syncd may use, moved to and from it: `npm run bench -- --sync-memory`.
    'sync-memory': { type: 'boolean', default: false },
    // Its file's size and syncd's limit, in MiB (default 4096 and 512; --quick 768 and 384).
    'memory-file': { type: 'string' },
    'memory-limit': { type: 'string' },
    // The control plane alone (start-up, restarts, throughput, memory): `npm run bench -- --control`.
    control: { type: 'boolean', default: false },
    // What hostile devices cost the worker (memory, pings), alone: `npm run bench -- --hostile`.
    hostile: { type: 'boolean', default: false },
    // Where the suites' tables go: BENCHMARKS.md by default, `-` for nowhere (printed only).
    report: { type: 'string' },
  },
});

// The suites, each with its section in BENCHMARKS.md; a run without a suite's flag runs the control
// plane, scan, connect, sync and many (100,000 files).
const SUITES = {
  control: 'Control plane',
  scan: 'Indexing',
  connect: 'Connecting',
  sync: 'Moving a folder between devices',
  many: '100,000 files',
  million: 'A million files',
  'sync-memory': 'A file larger than the memory syncd has',
  hostile: 'Hostile devices',
  endurance: 'Endurance',
} as const;
type Suite = keyof typeof SUITES;

// A --quick run is too rough to stand for a suite's figures: it writes only where --report says.
const reportFile =
  values.report === '-'
    ? undefined
    : (values.report ?? (values.quick ? undefined : join(packageRoot, 'BENCHMARKS.md')));
// Refused before hours of measuring, not after.
if (reportFile) await checkSections(reportFile);
const measured = new Map<Suite, Measure[]>();
const row = (suite: Suite, measure: Measure) => {
  const list = measured.get(suite) ?? [];
  list.push(measure);
  measured.set(suite, list);
};

/** Prints each suite's table and writes it into its section of the report file. */
async function report(syncthingUsed?: string): Promise<void> {
  // The command as it was given, less where its report went.
  const args = tokens.flatMap((token) =>
    token.kind === 'option' && token.name !== 'report'
      ? [token.rawName, ...(token.value === undefined ? [] : [token.value])]
      : [],
  );
  const run = thisRun(args, syncthingUsed);
  const sections = [...measured].map(([suite, measures]) => ({
    suite,
    title: SUITES[suite],
    body: sectionTable(run, measures),
  }));
  for (const { title, body } of sections) process.stdout.write(`## ${title}\n\n${body}\n\n`);
  if (sections.length === 0) {
    process.stderr.write('nothing measured: the suite needs syncthing on the PATH\n');
    return;
  }
  if (!reportFile) {
    process.stderr.write(
      `not written into BENCHMARKS.md (${values.quick ? 'a --quick run' : '--report -'})\n`,
    );
    return;
  }
  await writeSections(reportFile, sections);
  process.stderr.write(`wrote ${sections.map((section) => section.suite).join(', ')} into ${reportFile}\n`);
}

if (values.endurance) {
  const count = Number(values.endurance);
  const started = performance.now();
  const result = await endurance(syncd, count);
  const seconds = ((performance.now() - started) / 1000).toFixed(0);
  const survived = result.up && result.done === count && result.crashes === 0;
  row('endurance', {
    measure: `${count} API restarts in a row, then the service's state`,
    figure:
      `${result.done} of ${count} in ${seconds} s; ${result.up ? 'up' : 'DOWN'}, ` +
      `${result.restarts} restarts and ${result.crashes} crashes counted`,
    target: 'every restart, the service up, no crash',
    met: survived,
  });
  await report();
  process.exit(survived ? 0 : 1);
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

const syncthingVersion = withSyncthing
  ? execFileSync('syncthing', ['--version'], { encoding: 'utf8' }).split(' (')[0]
  : undefined;
const fmt = (n: number, digits = 0) => n.toFixed(digits);
const ratio = (a: number, b: number | undefined) => (b ? `${fmt(a / b, 2)}×` : '');
/** syncd's figure beside Syncthing's, when there is one, and their ratio. */
const compare = (ours: number, theirs: number | undefined, digits = 0) => ({
  figure: fmt(ours, digits),
  reference:
    theirs === undefined ? (withSyncthing ? '–' : 'no Syncthing') : `Syncthing ${fmt(theirs, digits)}`,
  ratio: ratio(ours, theirs),
});
/** The target `≤ Syncthing` (`≥` with `atLeast`), judged only when Syncthing was measured. */
const againstSyncthing = (ours: number, theirs: number | undefined, atLeast = false) => ({
  target: atLeast ? '≥ Syncthing' : '≤ Syncthing',
  met: theirs === undefined ? undefined : atLeast ? ours >= theirs : ours <= theirs,
});
/** The target `≥ factor× Syncthing's speed`: syncd's time at most Syncthing's divided by `factor`. */
const fasterThanSyncthing = (ours: number, theirs: number | undefined, factor: number) => ({
  target: `≥ ${factor}× Syncthing's speed (time ≤ ${fmt(1 / factor, 2)}×)`,
  met: theirs === undefined ? undefined : ours * factor <= theirs,
});
/** Two figures of one kind, `largest / after`, syncd's and Syncthing's. */
const pair = (ours: [number?, number?], theirs: [number?, number?] | undefined) => ({
  figure: `${fmt(ours[0] ?? 0)} / ${fmt(ours[1] ?? 0)}`,
  reference: theirs ? `Syncthing ${fmt(theirs[0] ?? 0)} / ${fmt(theirs[1] ?? 0)}` : '–',
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
    row('scan', {
      measure: `index ${tree.files} files, ${mib} MiB, from scratch, page cache warm, median of ${scanRounds} (ms)`,
      ...compare(ours.initialMs, theirs?.initialMs),
      ...fasterThanSyncthing(ours.initialMs, theirs?.initialMs, 1.1),
    });
    row('scan', {
      measure: `rescan with nothing changed, median of ${scanRounds} rounds' medians of 3 (ms)`,
      ...compare(ours.rescanMs, theirs?.rescanMs, 1),
      ...againstSyncthing(ours.rescanMs, theirs?.rescanMs),
    });
    row('scan', {
      measure: 'worker RSS during that scan, largest / after (MB; Syncthing: Go sys)',
      ...pair([ours.peakRssMb, ours.afterRssMb], theirs && [theirs.peakRssMb, theirs.afterRssMb]),
    });
  } finally {
    await tree.remove();
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
  log(
    `runs (ms): syncd ${times.syncd.map((ms) => fmt(ms)).join(', ')}; Syncthing ${times.syncthing.map((ms) => fmt(ms)).join(', ')}`,
  );
  row('connect', {
    measure: `a device added to it connected, median of ${connectRounds} (ms)`,
    ...compare(median(times.syncd), median(times.syncthing)),
  });
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
    log(`runs (ms): ${JSON.stringify(times.runs)}`);
    row('sync', {
      measure: `${what}, Syncthing to syncd (ms; Syncthing: to Syncthing)`,
      ...compare(times.toSyncd, times.syncthing),
      ...fasterThanSyncthing(times.toSyncd, times.syncthing, 1.1),
    });
    row('sync', {
      measure: `${what}, syncd to Syncthing (ms; Syncthing: to Syncthing)`,
      ...compare(times.fromSyncd, times.syncthing),
      ...fasterThanSyncthing(times.fromSyncd, times.syncthing, 1.1),
    });
    const cpu = (which: 'toSyncd' | 'fromSyncd') =>
      `${fmt(times.cpu[which].sender, 1)} / ${fmt(times.cpu[which].receiver, 1)}`;
    const theirCpu = `Syncthing ${fmt(times.cpu.syncthing.sender, 1)} / ${fmt(times.cpu.syncthing.receiver, 1)}`;
    row('sync', {
      measure: 'CPU seconds, Syncthing to syncd: the sender / the receiver, median',
      figure: cpu('toSyncd'),
      reference: theirCpu,
    });
    row('sync', {
      measure: 'CPU seconds, syncd to Syncthing: the sender / the receiver, median',
      figure: cpu('fromSyncd'),
      reference: theirCpu,
    });
    row('sync', {
      measure: "syncd's worker RSS while it pulled, largest (MB)",
      figure: fmt(times.pullRssMb),
    });
  } finally {
    await tree.remove();
  }
}

// 10. Many small files (see scripts/bench/many-files.ts): 100,000 with sending, or a million without.
async function manyFilesRows(suite: 'many' | 'million'): Promise<void> {
  if (!withSyncthing) return;
  const files = suite === 'many' ? (quick ? 10_000 : 100_000) : 1_000_000;
  const { manyFilesBench } = await import('./bench/many-files.ts');
  const figures = await manyFilesBench(files, suite === 'many', log);
  const count = files.toLocaleString('en');
  row(suite, {
    measure: `index ${count} files of ${fmt(figures.fileBytes / 1024)} KiB from scratch (ms)`,
    ...compare(figures.indexMs.syncd, figures.indexMs.syncthing),
    ...fasterThanSyncthing(figures.indexMs.syncd, figures.indexMs.syncthing, suite === 'many' ? 1.3 : 1),
  });
  row(suite, {
    measure: 'rescan with nothing changed, median of 3 (ms)',
    ...compare(figures.rescanMs.syncd, figures.rescanMs.syncthing),
    ...fasterThanSyncthing(figures.rescanMs.syncd, figures.rescanMs.syncthing, 1),
  });
  row(suite, {
    measure: "peak RSS indexing them, syncd's worker against Syncthing's process (VmHWM, MB)",
    ...compare(figures.indexPeakMb.syncd, figures.indexPeakMb.syncthing),
    ...againstSyncthing(figures.indexPeakMb.syncd, figures.indexPeakMb.syncthing),
  });
  row(suite, {
    measure: 'the index on disk (MB; syncd: index.sqlite and its WAL, Syncthing: index-v0.14.0.db)',
    ...compare(figures.indexDiskMb.syncd, figures.indexDiskMb.syncthing, 1),
    ...againstSyncthing(figures.indexDiskMb.syncd, figures.indexDiskMb.syncthing),
  });
  row(suite, {
    measure: '`syncd serve` to first pong in that home, against a new home, median of 5 (ms)',
    figure: fmt(figures.startToPongMs),
    reference: `new home ${fmt(figures.emptyStartToPongMs)}`,
    ratio: ratio(figures.startToPongMs, figures.emptyStartToPongMs),
    target: '≤ 1.2× a new home',
    met: figures.startToPongMs <= 1.2 * figures.emptyStartToPongMs,
  });
  row(suite, {
    measure: '`syncd serve` to the folder answering with every file, median of 5 (ms)',
    figure: fmt(figures.startToFolderMs),
  });
  if (figures.sendMs && figures.sendPeakMb !== undefined) {
    row(suite, {
      measure: `${count} files to a fresh Syncthing (ms; Syncthing: from Syncthing)`,
      ...compare(figures.sendMs.syncd, figures.sendMs.syncthing),
      ...fasterThanSyncthing(figures.sendMs.syncd, figures.sendMs.syncthing, 1),
    });
    const cpu = figures.sendCpuS;
    if (cpu) {
      row(suite, {
        measure: 'CPU seconds sending them: the sender / the receiving Syncthing',
        figure: `${fmt(cpu.syncd.sender, 1)} / ${fmt(cpu.syncd.receiver, 1)}`,
        reference: `Syncthing ${fmt(cpu.syncthing.sender, 1)} / ${fmt(cpu.syncthing.receiver, 1)}`,
      });
    }
    row(suite, {
      measure: "peak RSS of syncd's worker sending them (VmHWM, MB)",
      figure: fmt(figures.sendPeakMb),
      target: '≤ 250',
      met: figures.sendPeakMb <= 250,
    });
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
    log(JSON.stringify(figures));
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
      row('sync-memory', {
        measure: `${what} (${limit}): time (ms), worker's largest RSS (MB)`,
        figure: `${fmt(ms)}, ${fmt(rssMb)} MB; ${outcome}`,
        target: 'nothing killed, the same worker, the copies intact',
        met: survived,
      });
    }
  } finally {
    await tree.remove();
  }
}

if (values.hostile) {
  const { hostileBench } = await import('./bench/hostile.ts');
  for (const measure of await hostileBench(log)) row('hostile', measure);
  await report();
  process.exit(0);
}

// The suites that run alone.
const alone = [
  ['million', () => manyFilesRows('million')],
  ['many', () => manyFilesRows('many')],
  ['sync-memory', syncMemoryRows],
  ['sync', syncRows],
  ['connect', connectRows],
  ['scan', scanRows],
] as const;
for (const [flag, rows] of alone) {
  if (!values[flag]) continue;
  await rows();
  await report(syncthingVersion);
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
const startRow = (measure: string, ours: number, theirs: number, goal: number) =>
  row('control', {
    measure,
    figure: fmt(ours),
    reference: `prototype ${fmt(theirs)}`,
    ratio: ratio(ours, theirs),
    target: `≤ ${goal}× the prototype`,
    met: ours <= goal * theirs,
  });
row('control', {
  measure: `\`syncd serve\` to first pong, new home, median of ${runs} (ms)`,
  ...compare(start.syncd!, start.syncthing),
});
startRow(
  `\`syncd serve\` to first pong against the handoff prototype, new home (ms)`,
  start.syncd!,
  floor,
  1.5,
);
startRow(
  '`syncd serve` to first pong against the handoff prototype, home used before (ms)',
  start['syncd, home used before']!,
  floor,
  1.5,
);
startRow(
  '`npm start` to first pong against the prototype through `npm start` (ms)',
  start[syncdViaNpm.name]!,
  start[handoffLimitViaNpm.name]!,
  1.15,
);

// 2. Restarts under load.
log(`${restarts} restarts under load: syncd`);
const ours = await restartsUnderLoad(syncd, restarts);
let theirs: Awaited<ReturnType<typeof restartsUnderLoad>> | undefined;
if (withSyncthing) {
  log(`${SYNCTHING_RESTARTS} restarts under load: syncthing`);
  theirs = await restartsUnderLoad(syncthing, SYNCTHING_RESTARTS);
}
const pingsOf = (r: typeof ours) => `${r.failed} of ${r.pings}`;
if (ours.failures.length > 0) log(`syncd's failed pings: ${ours.failures.join(', ')}`);
row('control', {
  measure: `failed pings across restarts (syncd ${ours.restarts}, Syncthing ${theirs?.restarts ?? 0})`,
  figure: pingsOf(ours),
  reference: theirs ? `Syncthing ${pingsOf(theirs)} (${theirs.failures.join(', ')})` : '–',
  target: '0',
  met: ours.failed === 0 && ours.survived,
});
row('control', {
  measure: 'worst answered ping during restarts (ms)',
  ...compare(ours.worstMs, theirs?.worstMs),
  target: '≤ 200',
  met: ours.worstMs <= 200,
});
row('control', {
  measure: '99th-percentile answered ping during restarts (ms)',
  ...compare(ours.p99Ms, theirs?.p99Ms, 1),
});
row('control', {
  measure: 'restart request to the new process answering, median (ms)',
  ...compare(ours.restartToPongMs, theirs?.restartToPongMs),
});

log(`${restarts} restarts: the service's handover`);
const gaps = (await serviceGap(restarts)).sort((x, y) => x - y);
row('control', {
  measure: `no worker holds the service during a restart, median and max of ${restarts} (ms)`,
  figure: `${median(gaps)}, ${gaps.at(-1)}`,
});

// 3. Shutdown of an idle service to process exit.
const stop: Record<string, number> = {};
for (const service of services) {
  log(`shutdown to exit: ${service.name}`);
  const times = [];
  for (let i = 0; i < runs; i++) times.push(await shutdownToExit(service));
  stop[service.name] = median(times);
}
row('control', {
  measure: `shutdown request to exit, idle, median of ${runs} (ms)`,
  ...compare(stop.syncd!, stop.syncthing),
  target: '≤ 150',
  met: stop.syncd! <= 150,
});

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
row('control', {
  measure: `keep-alive pings, ${tool}, ${seconds} s, median of ${rounds} (requests/s)`,
  ...compare(tput.syncd!, tput.syncthing),
});
row('control', {
  measure:
    "keep-alive pings against a bare node:http server answering the same bytes, at the worker's niceness",
  figure: fmt(tput.syncd!),
  reference: `node:http ${fmt(tput['node:http']!)}`,
  ratio: `${fmt(ofBare, 2)}×`,
  target: '≥ 0.9×',
  met: ofBare >= 0.9,
});
row('control', {
  measure: "keep-alive pings of the same app listening itself, without the handoff, at the worker's niceness",
  figure: fmt(tput.syncd!),
  reference: `direct ${fmt(tput['syncd app, no handoff']!)}`,
  ratio: ratio(tput.syncd!, tput['syncd app, no handoff']),
});
const freshOf = (name: string) => median(fresh[name] ?? []);
const freshSyncthing = withSyncthing ? freshOf('syncthing') : undefined;
row('control', {
  measure: `pings on a new connection each, ${freshTool} -H 'Connection: close', median of ${rounds} (requests/s)`,
  ...compare(freshOf('syncd'), freshSyncthing),
  ...againstSyncthing(freshOf('syncd'), freshSyncthing, true),
});
for (const [name, what, short] of [
  [handoffLimit.name, 'the handoff prototype (the same design)', 'prototype'],
  [heldLimit.name, 'the held-socket prototype (each worker accepts)', 'prototype'],
  [directApp.name, "the same app listening itself, at the worker's niceness", 'direct'],
  [
    bareNode.name,
    "a bare node:http server listening itself at the worker's niceness (the floor of any Node server)",
    'node:http',
  ],
] as const) {
  row('control', {
    measure: `pings on a new connection each, against ${what}`,
    figure: fmt(freshOf('syncd')),
    reference: `${short} ${fmt(freshOf(name))}`,
    ratio: ratio(freshOf('syncd'), freshOf(name)),
  });
}

if (!values.control) {
  await scanRows();
  await connectRows();
  await syncRows();
  await manyFilesRows('many');
}

// 5. Idle memory, and the supervisor's after API restarts in a row.
const memory: Record<string, { parentMb: number; childMb: number }> = {};
for (const service of services) {
  log(`idle RSS: ${service.name}`);
  memory[service.name] = await idleRss(service);
}
const emptyMb = await emptyNodeRss();
const parent = compare(memory.syncd!.parentMb, memory.syncthing?.parentMb, 1);
row('control', {
  measure: 'idle RSS, supervisor / monitor (MB)',
  ...parent,
  reference: `${parent.reference}; an empty node ${fmt(emptyMb, 1)}`,
  target: '≤ 50',
  met: memory.syncd!.parentMb <= 50,
});
row('control', {
  measure: 'idle RSS, worker / main process (MB)',
  ...compare(memory.syncd!.childMb, memory.syncthing?.childMb, 1),
  target: '≤ 75',
  met: memory.syncd!.childMb <= 75,
});
const storm = quick ? 20 : 300;
log(`${storm} API restarts in a row: the supervisor's memory`);
const after = await endurance(syncd, storm);
row('control', {
  measure: `supervisor RSS idle, then after ${after.done} API restarts in a row (MB)`,
  figure: `${fmt(after.rssBeforeMb, 1)} → ${fmt(after.rssAfterMb, 1)}`,
  target: '≤ idle + 10',
  met: after.rssAfterMb - after.rssBeforeMb <= 10 && after.done === storm,
});

await report(syncthingVersion);
