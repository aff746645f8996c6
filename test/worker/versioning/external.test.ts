import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { splitCommand } from '../../../worker/versioning/external.ts';
import { versionedFolder } from './folder.ts';

// A script that logs its arguments and what it sees of the secrets, then does as told.
const SCRIPT = `#!/bin/sh
log="$(dirname "$0")/log"
for arg in "$@"; do echo "arg:$arg" >> "$log"; done
echo "env:\${SYNCD_API_KEY-unset},\${STGUIAPIKEY-unset},\${STGUIAUTH-unset},\${KEPT-unset}" >> "$log"
case "$MODE" in
  move) mkdir -p "$4/$(dirname "$2")" && mv "$1/$2" "$4/$2" ;;
  fail) exit 3 ;;
  keep) exit 0 ;;
esac
`;

function externalFolder(
  t: Test,
  mode: string,
  command = '%SCRIPT% %FOLDER_PATH% "%FILE_PATH%" %FOLDER_FILESYSTEM% %TRASH%',
) {
  const dir = t.testdirName;
  const script = join(dir, 'bin/versioner script.sh');
  const params = {
    command: command.replace('%SCRIPT%', `'${script}'`).replace('%TRASH%', join(dir, 'trash')),
  };
  const folder = versionedFolder(
    t,
    { type: 'external', params },
    { sub: { 'a b.txt': 'x' } },
    { bin: {}, trash: {} },
  );
  writeFileSync(script, SCRIPT, { mode: 0o755 });
  const saved = { ...process.env };
  Object.assign(process.env, {
    MODE: mode,
    SYNCD_API_KEY: 'k',
    STGUIAPIKEY: 'k',
    STGUIAUTH: 'u:p',
    KEPT: 'yes',
  });
  t.teardown(() => {
    for (const key of ['MODE', 'SYNCD_API_KEY', 'STGUIAPIKEY', 'STGUIAUTH', 'KEPT']) {
      if (saved[key] === undefined) delete process.env[key];
      else process.env[key] = saved[key];
    }
  });
  const log = () =>
    existsSync(join(dir, 'bin/log')) ? readFileSync(join(dir, 'bin/log'), 'utf8') : undefined;
  return { ...folder, log };
}

t.test(
  'the command gets the placeholders as whole words, no secrets, and must remove the file',
  async (t) => {
    const { root, dir, versioner, log } = externalFolder(t, 'move');
    await versioner.archive('sub/a b.txt');
    t.equal(
      log(),
      `arg:${root}\narg:sub/a b.txt\narg:basic\narg:${join(dir, 'trash')}\nenv:unset,unset,unset,yes\n`,
    );
    t.notOk(existsSync(join(root, 'sub/a b.txt')));
    t.equal(readFileSync(join(dir, 'trash/sub/a b.txt'), 'utf8'), 'x');
  },
);

t.test('a failing command is "exit status N"; one that leaves the file fails too', async (t) => {
  const failing = externalFolder(t, 'fail');
  await t.rejects(failing.versioner.archive('sub/a b.txt'), {
    name: 'VersioningError',
    message: 'external versioner: archive: exit status 3',
  });
  t.ok(existsSync(join(failing.root, 'sub/a b.txt')));
  process.env.MODE = 'keep';
  await t.rejects(failing.versioner.archive('sub/a b.txt'), {
    message: 'external versioner: archive: file was not removed by external script',
  });
});

t.test('a missing file runs nothing', async (t) => {
  const { versioner, log } = externalFolder(t, 'move');
  await versioner.archive('sub/missing.txt');
  t.equal(log(), undefined);
});

t.test('commands that cannot run as given are refused', async (t) => {
  const cases: Array<[string, RegExp]> = [
    ['', /^external versioner: archive: command is empty, please enter a valid command$/],
    ['   ', /command is empty/],
    ['%SCRIPT% a | tee x', /command is invalid: \| is a shell operator/],
    ['%SCRIPT% a; rm -rf x', /command is invalid: ; is a shell operator/],
    ['%SCRIPT% $HOME/x', /command is invalid: \$HOME is not expanded/],
    ['%SCRIPT% "unterminated', /command is invalid: Unterminated double-quoted string/],
    ['%SCRIPT% *', /command is invalid: \* is a glob pattern/],
    [
      'no-such-command-for-syncd %FILE_PATH%',
      /exec: "no-such-command-for-syncd": executable file not found in \$PATH/,
    ],
  ];
  for (const [command, message] of cases) {
    const { versioner, log, root } = externalFolder(t, 'move', command);
    await t.rejects(versioner.archive('sub/a b.txt'), { message }, JSON.stringify(command));
    t.equal(log(), undefined, 'the script never ran');
    t.ok(existsSync(join(root, 'sub/a b.txt')));
  }
});

t.test('the split follows POSIX quoting', async (t) => {
  t.same(splitCommand(`a 'b c' "d \\"e\\"" f\\ g '' "$"`), ['a', 'b c', 'd "e"', 'f g', '', '$']);
  t.same(splitCommand(`mv "%FOLDER_PATH%/%FILE_PATH%" '$x'`), ['mv', '%FOLDER_PATH%/%FILE_PATH%', '$x']);
});

t.test('nothing to list, restore or clean', async (t) => {
  const { versioner } = externalFolder(t, 'move');
  await t.rejects(versioner.versions(), {
    name: 'VersioningError',
    message: 'external versioner: get versions: version restoration not supported with the current versioner',
  });
  await t.rejects(versioner.restore('sub/a b.txt', new Date()), {
    message: 'external versioner: restore: version restoration not supported with the current versioner',
  });
  await versioner.clean();
  t.equal(versioner.type, 'external');
});
