// docs/design.md's Layout against the sources: every source file and folder of the two processes,
// shared/ and the GUI is named there, and every file it names exists, so that the map cannot go stale unseen.
import { readdir, readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import t from 'tap';
import { packageRoot } from '../../shared/paths.ts';

const SOURCES = ['worker', 'supervisor', 'shared', 'gui'];

async function layout(): Promise<string> {
  const page = await readFile(join(packageRoot, 'docs', 'design.md'), 'utf8');
  const start = page.indexOf('## Layout');
  const end = page.indexOf('\n## ', start + 1);
  if (start < 0) throw new Error('docs/design.md has no "## Layout" section');
  return page.slice(start, end < 0 ? undefined : end);
}

/** The sources' files (generated ones left out) and folders, relative to the package root. */
async function sources(): Promise<{ files: string[]; folders: string[] }> {
  const files: string[] = [];
  const folders: string[] = [];
  for (const top of SOURCES) {
    for (const entry of await readdir(join(packageRoot, top), { recursive: true, withFileTypes: true })) {
      const path = join(entry.parentPath, entry.name).slice(packageRoot.length + 1);
      if (entry.isDirectory()) folders.push(path);
      else if (/\.(tsx?|proto|wat)$/.test(entry.name) && !entry.name.endsWith('_pb.ts')) files.push(path);
    }
  }
  return { files, folders };
}

t.test('the Layout names every source file and folder', async (t) => {
  const text = await layout();
  const named = new Set(text.match(/[\w.-]+\.(tsx?|proto|wat)\b/g) ?? []);
  const { files, folders } = await sources();
  const missing = files.filter((file) => !named.has(basename(file)));
  t.same(missing, [], `not in docs/design.md's Layout: ${missing.join(', ') || 'none'}`);
  const missingFolders = folders.filter((folder) => !text.includes(`${basename(folder)}/`));
  t.same(missingFolders, [], `folders not in the Layout: ${missingFolders.join(', ') || 'none'}`);
});

t.test('every file the Layout names exists', async (t) => {
  const text = await layout();
  const { files } = await sources();
  const existing = new Set(files.map((file) => basename(file)));
  for (const other of ['scripts', 'test']) {
    for (const file of await readdir(join(packageRoot, other), { recursive: true }))
      existing.add(basename(file));
  }
  const stale = [...new Set(text.match(/[\w.-]+\.(tsx?|proto|wat)\b/g) ?? [])].filter(
    (name) => !existing.has(name) && !name.endsWith('_pb.ts'),
  );
  t.same(stale, [], `named in the Layout but gone: ${stale.join(', ') || 'none'}`);
});
