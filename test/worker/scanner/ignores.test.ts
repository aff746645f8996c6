import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { Ignores } from '../../../worker/scanner/ignores.ts';

async function matcher(lines: string[], files: Record<string, string> = {}) {
  const folder = t.testdir();
  for (const [name, text] of Object.entries(files)) {
    await mkdir(join(folder, name, '..'), { recursive: true });
    await writeFile(join(folder, name), text);
  }
  await writeFile(join(folder, '.stignore'), lines.join('\n'));
  return Ignores.load(folder);
}

t.test("Syncthing's pattern syntax", async (t) => {
  const cases: Array<[string[], Array<[string, boolean]>]> = [
    [
      ['foo'],
      [
        ['foo', true],
        ['a/foo', true],
        ['foo/bar', true],
        ['foobar', false],
        ['a/foobar', false],
      ],
    ],
    [
      ['/foo'],
      [
        ['foo', true],
        ['foo/x', true],
        ['a/foo', false],
      ],
    ],
    [
      ['*.tmp'],
      [
        ['x.tmp', true],
        ['a/b/x.tmp', true],
        ['x.tmpl', false],
        ['x.tmp/inside', true],
      ],
    ],
    [
      ['a/*/c'],
      [
        ['a/b/c', true],
        ['a/b/x/c', false],
        ['z/a/b/c', true],
      ],
    ],
    [
      ['a/**/c'],
      [
        ['a/b/x/c', true],
        ['a/c', false],
      ],
    ],
    [
      ['**/cache'],
      [
        ['cache', true],
        ['x/y/cache', true],
        ['x/cache/file', true],
      ],
    ],
    [
      ['file?.txt'],
      [
        ['file1.txt', true],
        ['file12.txt', false],
        ['file/.txt', false],
      ],
    ],
    [
      ['[abc].txt'],
      [
        ['a.txt', true],
        ['d.txt', false],
      ],
    ],
    [
      ['[!abc].txt'],
      [
        ['a.txt', false],
        ['d.txt', true],
      ],
    ],
    [
      ['[a-c]x'],
      [
        ['bx', true],
        ['dx', false],
      ],
    ],
    [
      ['{foo,bar}.log'],
      [
        ['foo.log', true],
        ['bar.log', true],
        ['baz.log', false],
      ],
    ],
    [
      ['(?i)README'],
      [
        ['readme', true],
        ['ReadMe', true],
        ['docs/README', true],
      ],
    ],
    [['README'], [['readme', false]]],
    [
      ['with\\*star'],
      [
        ['with*star', true],
        ['withxstar', false],
      ],
    ],
    [
      ['dir/'],
      [
        ['dir/x', true],
        ['dir', false],
      ],
    ],
    [
      ['!keep.tmp', '*.tmp'],
      [
        ['keep.tmp', false],
        ['other.tmp', true],
      ],
    ],
    [['*.tmp', '!keep.tmp'], [['keep.tmp', true]]],
    [
      ['// a comment', '', '  spaced  '],
      [
        ['spaced', true],
        ['// a comment', false],
      ],
    ],
    [
      ['(?d)(?i)!Thumbs.db', '*'],
      [
        ['thumbs.db', false],
        ['other', true],
      ],
    ],
  ];
  for (const [lines, expectations] of cases) {
    const ignores = await matcher(lines);
    for (const [name, ignored] of expectations) {
      t.equal(ignores.ignored(name), ignored, `${JSON.stringify(lines)}: ${name}`);
    }
  }
});

t.test('#include reads patterns from a file beside the including one; errors name the line', async (t) => {
  const ignores = await matcher(['#include more/patterns', 'local'], {
    'more/patterns': '*.bak\n#include deeper\n',
    'more/deeper': 'deep-only\n',
  });
  t.ok(ignores.ignored('x.bak'));
  t.ok(ignores.ignored('deep-only'));
  t.ok(ignores.ignored('local'));
  t.same(ignores.lines, ['#include more/patterns', 'local']);
  t.ok(ignores.expanded.includes('**/*.bak'));

  await t.rejects(matcher(['#include missing']), {
    name: 'IgnoreError',
    message: /"#include missing": cannot read missing/,
  });
  await t.rejects(matcher(['#include']), { message: /#include needs a file name/ });
  await t.rejects(matcher(['[abc']), { message: /"\[abc": an unclosed \[/ });
  await t.rejects(matcher(['!']), { message: /missing pattern/ });
  // An include that includes itself is read once.
  const looping = await matcher(['#include loop'], { loop: '#include loop\nx\n' });
  t.ok(looping.ignored('x'));
});

t.test('no .stignore: nothing ignored', async (t) => {
  const ignores = await Ignores.load(t.testdir());
  t.equal(ignores.lines, null);
  t.equal(ignores.ignored('anything'), false);
  t.equal(ignores.empty, true);
});
