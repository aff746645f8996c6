// Generates the TypeScript for the protocol's messages from their .proto files, with protoc-gen-es
// driven by buf: `node --import tsx scripts/build/protobuf.ts` after changing a .proto. The output is
// kept in the sources, so that neither the build nor a checkout needs the generator; a test generates
// again and checks that they agree.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { execa } from 'execa';
import { packageRoot } from '../../shared/paths.ts';

/** The .proto files, relative to the package root; each generates NAME_pb.ts beside itself. */
export const PROTO_FILES = ['worker/bep/bep.proto', 'worker/discovery/local.proto'];

/** The generated TypeScript of each .proto file, by the path of its output. */
export async function generateProtobuf(): Promise<Map<string, string>> {
  const out = await mkdtemp(join(tmpdir(), 'syncd-protobuf-'));
  try {
    const template = {
      version: 'v2',
      plugins: [{ local: 'protoc-gen-es', out, opt: ['target=ts', 'import_extension=ts'] }],
    };
    const bin = join(packageRoot, 'node_modules', '.bin');
    const generated = new Map<string, string>();
    for (const file of PROTO_FILES) {
      // Each file is its own module: its folder is the input, and it lands in out/ by its base name.
      await execa(
        join(bin, 'buf'),
        ['generate', '--template', JSON.stringify(template), dirname(file), '--path', file],
        {
          cwd: packageRoot,
          env: { PATH: `${bin}:${process.env.PATH ?? ''}` },
        },
      );
      const name = `${basename(file, '.proto')}_pb.ts`;
      const text = await readFile(join(out, name), 'utf8');
      generated.set(join(dirname(file), name), text);
    }
    return generated;
  } finally {
    await rm(out, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const [path, text] of await generateProtobuf()) {
    await writeFile(join(packageRoot, path), text);
    process.stdout.write(`wrote ${path}\n`);
  }
}
