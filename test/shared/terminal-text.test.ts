import t from 'tap';
import { safeLine, safeLines } from '../../shared/terminal-text.ts';

t.test('safeLine escapes what drives a terminal or forges a line, and nothing else', async (t) => {
  t.equal(safeLine('plain name, ünïcode 写真 ✓'), 'plain name, ünïcode 写真 ✓');
  t.equal(safeLine('a\nb\rc\td'), 'a\\nb\\rc\\td');
  t.equal(safeLine('\u001b[2J\u0007\u007f\u009b'), '\\u001b[2J\\u0007\\u007f\\u009b');
  t.equal(safeLine('x\u2028y\u2029z'), 'x\\u2028y\\u2029z', 'line and paragraph separators');
  t.equal(safeLine('\u202egnp.exe\u2066'), '\\u202egnp.exe\\u2066', 'bidirectional overrides and isolates');
});

t.test('safeLines keeps line feeds, escapes the rest', async (t) => {
  t.equal(safeLines('one\ntwo\r\n\u001b[31mred'), 'one\ntwo\\r\n\\u001b[31mred');
});
