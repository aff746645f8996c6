// Bundles each entry (the command with the supervisor, the worker, the exports, the web GUI) under dist/: a bundle starts three
// times faster than the TypeScript sources through tsx (measured: about 250 ms against 800 ms from launch to first
// pong). A service may run from this very dist/ while it is rebuilt (npm ci in its checkout): no file is ever missing.
import { execFile } from 'node:child_process';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { INPUTS_FILE, recordBuildInputs } from './build/inputs.ts';
import { buildGui } from './build/gui.ts';
import { replaceBuild } from './build/replace-build.ts';

const root = fileURLToPath(new URL('..', import.meta.url));

const entries = {
  'worker/main': 'worker/main.ts',
  'scripts/healthcheck': 'scripts/healthcheck.ts',
  'bin/syncd': 'scripts/syncd.ts',
  // What the package exports: `syncd/testing` (the harness) and `syncd/client`.
  testing: 'shared/client/testing.ts',
  client: 'shared/client/client.ts',
  // For the benchmark only: the worker's app listening itself, built like the worker for a fair comparison.
  'scripts/bench/direct-app': 'scripts/bench/direct-app.ts',
};

// Fastify builds its JSON-schema compilers (Ajv, fast-json-stringify) only for routes that declare
// schemas, and no route of ours does (worker/http/app.ts gives Fastify compilers that refuse): left out,
// they are 600 KB less for the worker to parse at every start. Tests run the sources, with them.
const withoutSchemaCompilers: Plugin = {
  name: 'without-schema-compilers',
  setup(builder) {
    builder.onResolve({ filter: /^@fastify\/(ajv-compiler|fast-json-stringify-compiler)$/ }, (args) => ({
      path: args.path,
      namespace: 'without-schema-compilers',
    }));
    builder.onLoad({ filter: /.*/, namespace: 'without-schema-compilers' }, (args) => ({
      contents: `module.exports = () => () => { throw new Error(${JSON.stringify(
        `${args.path} is left out of the build (scripts/build.ts): syncd routes declare no JSON schemas`,
      )}); };`,
      loader: 'js',
    }));
  },
};

// What `dependencies` lists is what cannot be bundled: native addons (a database binding), loaded from
// node_modules at run time. Everything else is a development dependency, bundled into dist/.
const manifest = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as {
  dependencies?: Record<string, string>;
};
// A build stopped midway must not leave the record of the one before: it would call this one current.
await rm(join(root, INPUTS_FILE), { force: true });
const shared = {
  write: false,
  absWorkingDir: root,
  outdir: 'dist',
  bundle: true,
  platform: 'node',
  target: 'node20',
  sourcemap: 'linked',
  logLevel: 'warning',
  metafile: true,
} as const;
const [main, thread, gui] = await Promise.all([
  build({
    ...shared,
    external: Object.keys(manifest.dependencies ?? {}),
    entryPoints: entries,
    // Dynamic imports (the serve command, the engine) become chunks of their own, loaded only when used.
    // Every output, chunks included, sits one folder below dist/: the supervisor's code finds the
    // worker as ../worker/main.js wherever the bundler puts it.
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    format: 'esm',
    // The bundled CommonJS packages (pino, fastify) call require() for Node's own modules.
    banner: {
      js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
    },
    plugins: [withoutSchemaCompilers],
  }),
  // The scanner's hashing threads load this by path (see worker/scanner/hasher-pool.ts): one CommonJS
  // file, because a thread starts at every scan after an idle spell, and an ES module's thread loads
  // Node's module loader first and then each chunk (36 ms against 28 ms alone, and twice that beside a
  // walk on two cores).
  build({
    ...shared,
    entryPoints: { 'worker/scanner/hash-thread': 'worker/scanner/hash-thread.ts' },
    format: 'cjs',
    outExtension: { '.js': '.cjs' },
  }),
  buildGui(root),
]);
const outputFiles = [...main.outputFiles, ...thread.outputFiles, ...gui.files];

await replaceBuild(join(root, 'dist'), outputFiles, { keep: ['types/', INPUTS_FILE.slice('dist/'.length)] });

// Type declarations of the exported modules, for TypeScript users. TypeScript is a development
// dependency: an install without it (npm ci --omit=dev) gets the bundles without the declarations.
let tsc: string | undefined;
try {
  tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
} catch {
  process.stderr.write('build: typescript is not installed; dist/types (declarations) skipped\n');
}
if (tsc) {
  // Declarations are for compilers, never run: cleared, so that a moved module leaves none behind.
  await rm(join(root, 'dist', 'types'), { recursive: true, force: true });
  await promisify(execFile)(process.execPath, [tsc, '-p', join(root, 'tsconfig.types.json')], { cwd: root });
  // The sources import with .ts extensions; a consumer's TypeScript resolves .js to the .d.ts beside it.
  for (const entry of await readdir(join(root, 'dist', 'types'), { recursive: true })) {
    if (!entry.endsWith('.d.ts')) continue;
    const path = join(root, 'dist', 'types', entry);
    const text = await readFile(path, 'utf8');
    await writeFile(path, text.replace(/(from '\.{1,2}\/[^']+)\.ts'/g, "$1.js'"));
  }
}

// Last, once dist/ is whole: what it was made from, so that a test run skips a build that would change
// nothing (scripts/build/if-stale.ts).
await recordBuildInputs(
  root,
  [...Object.keys(main.metafile.inputs), ...Object.keys(thread.metafile.inputs), ...gui.inputs],
  outputFiles.map((file) => relative(root, file.path)),
);
