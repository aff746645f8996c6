import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { adler32Source, compileAdler32 } from '../../../scripts/build/adler32-wasm.ts';
import { packageRoot } from '../../../shared/paths.ts';

t.test('the Adler-32 module in the sources is what adler32.wat compiles to', async (t) => {
  const committed = await readFile(join(packageRoot, 'worker', 'checksums', 'adler32-wasm.ts'), 'utf8');
  t.equal(
    committed,
    adler32Source(await compileAdler32()),
    'run scripts/build/adler32-wasm.ts after changing the .wat',
  );
});
