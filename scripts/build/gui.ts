// syncd's web GUI (gui/): its TypeScript and JSX bundled into one script and one style sheet for the
// browsers people use (the last few years of Chromium, Firefox and Safari), with its page and icon,
// into dist/gui, which the worker serves at / (worker/http/routes/own-gui.ts).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { build } from 'esbuild';
import type { BuiltFile } from './replace-build.ts';

/** The files copied as they are. */
const STATIC = ['index.html', 'icon.svg'];

export async function buildGui(root: string): Promise<{ files: BuiltFile[]; inputs: string[] }> {
  const result = await build({
    absWorkingDir: root,
    entryPoints: { app: 'gui/main.tsx' },
    outdir: 'dist/gui',
    tsconfig: 'gui/tsconfig.json',
    bundle: true,
    write: false,
    metafile: true,
    minify: true,
    sourcemap: 'linked',
    format: 'esm',
    platform: 'browser',
    target: ['chrome111', 'firefox115', 'safari16.4'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    logLevel: 'warning',
  });
  const copied = await Promise.all(
    STATIC.map(async (name) => ({
      path: join(root, 'dist', 'gui', name),
      contents: await readFile(join(root, 'gui', name)),
    })),
  );
  return {
    files: [...result.outputFiles, ...copied],
    inputs: [
      ...Object.keys(result.metafile.inputs),
      'gui/tsconfig.json',
      ...STATIC.map((name) => `gui/${name}`),
    ],
  };
}
