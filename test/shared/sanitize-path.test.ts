import t from 'tap';
import { isOneName, sanitizePath } from '../../shared/sanitize-path.ts';

t.test('names are made as Syncthing makes them (lib/fs/util_test.go TestSanitizePath)', async (t) => {
  const cases: Array<[string, string]> = [
    ['', ''],
    ['foo', 'foo'],
    ['\\*/foo\\?/bar[{!@$%^&*#()}]', 'foo bar ()'],
    ['Räksmörgås', 'Räksmörgås'],
    ['Räk \\/ smörgås', 'Räk smörgås'],
    ['هذا هو *\x07?اسم الملف', 'هذا هو اسم الملف'],
    ['../foo.txt', '.. foo.txt'],
    ['  \t \n filename in  \t space\r', 'filename in space'],
    ['你\uFFFD好', '你 好'],
    ['\0 foo', 'foo'],
    ['nul.txt.jpg', '-nul.txt.jpg'],
    ['lpt9', '-lpt9'],
    ['LPTX', 'LPTX'],
  ];
  for (const [i, [text, name]] of cases.entries()) t.equal(sanitizePath(text), name, `case ${i}`);
});

t.test('what a device sends never makes a path: at most one name, or none', async (t) => {
  const texts = ['../../etc', 'a/b', '/etc/passwd', '..', '.', '~/x', '\u00a0..\u2028', '../', 'a\\..\\b'];
  for (const [i, text] of texts.entries()) {
    const name = sanitizePath(text);
    t.notOk(name.includes('/'), `text ${i} makes a name without /`);
    if (name === '' || name === '.' || name === '..') t.notOk(isOneName(name), `text ${i} makes no name`);
  }
  t.equal(sanitizePath('../../etc'), '.. .. etc');
  t.equal(sanitizePath('a/b'), 'a b');
  t.equal(sanitizePath('\u00a0..\u2028'), '..', 'spaces of every kind are trimmed');
  t.ok(isOneName('.. .. etc'));
  t.notOk(isOneName('..'));
  t.notOk(isOneName(''));
});
