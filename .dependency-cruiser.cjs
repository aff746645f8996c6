// The layers of syncd's sources, checked by `npm test` (test/checks/layers.test.ts) with
// dependency-cruiser. docs/design.md draws them. Each rule says what a folder may NOT import; the
// floors, from the ground up, follow Syncthing's package graph (lib/protocol and lib/fs at the
// bottom, lib/db owning the global state, lib/scanner knowing no database, lib/model between
// lib/api and the rest).

/** A folder of the worker, as a path pattern. */
const w = (...names) => `^worker/(${names.join('|')})/`;

// Everything in the worker above a floor, for the rules "nothing below imports what is above".
const ABOVE_INDEX = ['scanner', 'versioning', 'sync', 'devices', 'discovery', 'folders', 'service', 'http'];

/** A rule: files matching `from` never import files matching `to`. */
const never = (name, comment, from, to) => ({
  name,
  comment,
  severity: 'error',
  from: { path: from },
  to: { path: to },
});

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'An import circle: each file of it can only be understood with all the others.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    never(
      'halves-apart',
      'The supervisor and the worker meet only over IPC (shared/ipc/protocol.ts).',
      '^supervisor/',
      '^worker/',
    ),
    never('worker-knows-no-supervisor', 'As halves-apart, the other way.', '^worker/', '^supervisor/'),
    never(
      'shared-below-all',
      'shared/ is what both halves and the scripts build on; it imports none of them.',
      '^shared/',
      '^(worker|supervisor|scripts)/',
    ),
    never(
      'gui-in-the-browser',
      'The web GUI runs in a browser: it speaks to the service over REST, and takes only the shapes of shared/ (types).',
      '^gui/',
      '^(worker|supervisor|scripts|shared/(?!config/defaults\\.ts$|api-types\\.ts$|sanitize-path\\.ts$))',
    ),
    never(
      'nothing-imports-the-gui',
      'The GUI is built apart (scripts/build/gui.ts), never imported.',
      '^(worker|supervisor|scripts|shared)/',
      '^gui/',
    ),
    never(
      'client-outside-both',
      'The client (shared/client/) is for programs that drive syncd; neither process imports it.',
      '^(worker|supervisor)/',
      '^shared/client/',
    ),
    never(
      'process-wiring-on-top',
      "The worker's own top-level files (main, run, the orphan guard, priority) wire the process; no layer imports them.",
      '^worker/[^/]+/',
      '^worker/[^/]+\\.ts$',
    ),
    never(
      'records-ground-floor',
      'The records every layer speaks (Syncthing lib/protocol types) import nothing of the worker.',
      w('records', 'checksums'),
      '^worker/(?!records/|checksums/)',
    ),
    never(
      'files-ground-floor',
      "A folder's one door to its files (lib/fs) knows only the records.",
      w('files'),
      '^worker/(?!files/|records/)',
    ),
    never(
      'events-config-ground-floor',
      'The event log and the configuration are read by every layer and read none of them.',
      w('events', 'config'),
      '^worker/(?!events/|config/)',
    ),
    never(
      'wire-knows-no-store',
      'The wire protocol (lib/protocol) knows no database, scanner, puller or device logic.',
      w('bep'),
      '^worker/(?!bep/|records/|checksums/)',
    ),
    never(
      'index-owns-global-state',
      'The index (lib/db) computes its global versions and need itself; it knows no layer above.',
      w('index-db'),
      w(...ABOVE_INDEX, 'bep', 'files'),
    ),
    never(
      'scanner-knows-no-index',
      'The scanner (lib/scanner) walks and hashes; what the index holds is for the folder to compare.',
      w('scanner'),
      w('index-db', ...ABOVE_INDEX.filter((name) => name !== 'scanner'), 'bep'),
    ),
    never(
      'versioning-alone',
      'A versioner (lib/versioner) works on the folder files and nothing else.',
      w('versioning'),
      '^worker/(?!versioning/|files/|records/|events/)',
    ),
    never(
      'puller-below-folders-and-devices',
      'The puller gets blocks through a function it is given; it knows no connection or folder runner.',
      w('sync'),
      w('devices', 'discovery', 'folders', 'service', 'http'),
    ),
    never(
      'devices-below-folders',
      'Connections, index exchange and block serving know no puller, folder runner or REST face.',
      w('devices'),
      w('sync', 'folders', 'service', 'http', 'discovery', 'scanner', 'versioning'),
    ),
    never(
      'discovery-alone',
      'Discovery finds addresses; it knows nothing of folders or files.',
      w('discovery'),
      '^worker/(?!discovery/|bep/|config/|events/)',
    ),
    never(
      'folders-below-service',
      'A folder runner is driven by the model; it knows no connection, REST face or composition.',
      w('folders'),
      w('devices', 'discovery', 'service', 'http'),
    ),
    never(
      'service-below-http',
      'The model and the composition root do not know the REST face that calls them.',
      w('service'),
      w('http'),
    ),
    never(
      'rest-talks-to-the-model',
      'The REST face (lib/api) calls the SyncModel (service/model.ts), never the engine behind it.',
      w('http'),
      w('index-db', 'folders', 'scanner', 'sync', 'devices', 'discovery', 'versioning', 'bep', 'files'),
    ),
    {
      name: 'rest-only-the-model-interface',
      comment: 'Of service/, the REST face sees the model interface and the service holder only.',
      severity: 'error',
      from: { path: w('http') },
      to: { path: '^worker/service/', pathNot: '^worker/service/(model|service)\\.ts$' },
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^dist/|^node_modules/)' },
  },
};
