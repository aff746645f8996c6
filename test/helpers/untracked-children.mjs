// tap's process tracker (@tapjs/processinfo, for coverage, which this project does not measure) puts
// its loader into every Node process a test starts: it adds itself to NODE_OPTIONS on each spawn,
// through process-on-spawn. With it, each supervisor and worker a test started cost twice the CPU
// (a loader thread of its own that every module load crosses): 2.1 CPU-seconds a service instead of
// 1.0. A test process drops it before it starts anything. Loaded by tap's node-arg, first;
// test/untracked-children.test.ts checks that it still works with the tap installed.
/* global process */
const onSpawn = globalThis[Symbol.for('process-on-spawn@*:singletonId')];
if (onSpawn && Array.isArray(onSpawn.listeners)) onSpawn.listeners.length = 0;
const tracker = /"?--(?:import|loader)=[^"\s]*@tapjs\/processinfo[^"\s]*"?/g;
const options = (process.env.NODE_OPTIONS ?? '').replace(tracker, '').trim();
if (options) process.env.NODE_OPTIONS = options;
else delete process.env.NODE_OPTIONS;
