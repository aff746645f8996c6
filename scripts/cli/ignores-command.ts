import type { SyncdClient } from '../../shared/client/client.ts';
import { ConfigUsageError } from './config-commands.ts';
import type { Print } from './format.ts';

/** `syncd ignores get FOLDER | set FOLDER PATTERN... | clear FOLDER`: the folder's .stignore. */
export async function ignoresCommand(
  client: SyncdClient,
  args: string[],
  print: Print,
  readInput: () => Promise<string>,
): Promise<void> {
  const [sub, folder, ...patterns] = args;
  if (sub !== 'get' && sub !== 'set' && sub !== 'clear')
    throw new ConfigUsageError(
      sub === undefined ? 'ignores needs get, set or clear' : `ignores takes get, set or clear, not "${sub}"`,
    );
  if (folder === undefined || folder === '') throw new ConfigUsageError(`ignores ${sub} needs the FOLDER`);
  if (sub === 'get') {
    if (patterns.length > 0) throw new ConfigUsageError(`ignores get: unexpected "${patterns.join(' ')}"`);
    const answer = await client.ignores(folder);
    const lines = answer.ignore ?? [];
    // The lines alone, none when there are none: `ignores get A | ignores set B -` copies them.
    print(answer, lines.join('\n'));
    return;
  }
  if (sub === 'clear' && patterns.length > 0)
    throw new ConfigUsageError(
      `ignores clear: unexpected "${patterns.join(' ')}"; ignores set gives patterns`,
    );
  if (sub === 'set' && patterns.length === 0)
    throw new ConfigUsageError(
      'ignores set needs the PATTERNs (- reads them from standard input; ignores clear removes all)',
    );
  const lines =
    patterns.length === 1 && patterns[0] === '-'
      ? (await readInput()).split(/\r?\n/).filter((line, i, all) => line !== '' || i < all.length - 1)
      : patterns;
  await client.setIgnores(folder, lines);
  const { ignore } = await client.ignores(folder);
  print(
    { ok: 'set', folder, ignore: ignore ?? [] },
    lines.length === 0
      ? `folder ${folder} ignores nothing now`
      : `folder ${folder} ignores, from now on:\n${lines.join('\n')}`,
  );
}
