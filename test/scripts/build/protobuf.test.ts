import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { generateProtobuf } from '../../../scripts/build/protobuf.ts';
import { packageRoot } from '../../../shared/paths.ts';

t.test('the generated protocol code in the sources is what the .proto files generate', async (t) => {
  for (const [path, text] of await generateProtobuf()) {
    t.equal(
      await readFile(join(packageRoot, path), 'utf8'),
      text,
      `${path}: run npm run generate after changing its .proto`,
    );
  }
});
