// Text as the project's formatter (oxfmt, with .oxfmtrc.jsonc) lays out the file at `path`: generated
// pages are written so, and `npm run lint` then leaves them as they are.
import { execa } from 'execa';
import { packageRoot } from '../shared/paths.ts';

export async function formatted(path: string, text: string): Promise<string> {
  const { stdout } = await execa('oxfmt', [`--stdin-filepath=${path}`], {
    input: text,
    cwd: packageRoot,
    preferLocal: true,
    stripFinalNewline: false,
  });
  return stdout;
}
