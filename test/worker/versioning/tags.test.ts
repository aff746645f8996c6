import t from 'tap';
import { inTimeZone } from '../../helpers/time-zone.ts';
import { goAtoi } from '../../../worker/versioning/params.ts';
import {
  extractTag,
  formatTag,
  isVersionOf,
  parseTag,
  tagFilename,
  untagFilename,
} from '../../../worker/versioning/tags.ts';

// Each test runs in a zone without daylight saving, far from UTC: a tag in UTC would show.
const zone = 'Asia/Kolkata';

t.test('a tag is the local time YYYYMMDD-HHMMSS, and reads back as that local time', async (t) => {
  inTimeZone(t, zone);
  const at = new Date(Date.UTC(2022, 2, 15, 4, 41, 12, 999));
  t.equal(formatTag(at), '20220315-101112', 'local (+05:30), not UTC, seconds truncated');
  t.equal(parseTag('20220315-101112')?.getTime(), Date.UTC(2022, 2, 15, 4, 41, 12));
  t.equal(formatTag(new Date(Date.UTC(999, 0, 1))).slice(0, 4), '0999', 'the year has four digits');
  for (const bad of [
    '20220431-000000',
    '20230229-000000',
    '20221301-000000',
    '20220315-240000',
    '2022031-1011120',
  ])
    t.equal(parseTag(bad), undefined, `${bad} is not a time`);
  for (const bad of ['20220315-101160', '20220315101112', ' 20220315-101112', 'x'])
    t.equal(parseTag(bad), undefined, `${bad} is not a time`);
  t.equal(parseTag('20240229-000000')?.getDate(), 29, 'a leap day is');
});

t.test('the tag goes before the last extension of the last element (Go filepath.Ext)', async (t) => {
  inTimeZone(t, zone);
  const cases: Array<[string, string]> = [
    ['foo.txt', 'foo~T.txt'],
    ['a.tar.gz', 'a.tar~T.gz'],
    ['noext', 'noext~T'],
    ['.bashrc', '~T.bashrc'],
    ['file.', 'file~T.'],
    ['dir.v2/file', 'dir.v2/file~T'],
    ['sub/dir/f.txt', 'sub/dir/f~T.txt'],
  ];
  for (const [name, tagged] of cases) t.equal(tagFilename(name, 'T'), tagged, name);
});

t.test('names are untagged as Syncthing untags them', async (t) => {
  inTimeZone(t, zone);
  const cases: Array<[string, [string, string]]> = [
    ['foo~20220315-101112.txt', ['foo.txt', '20220315-101112']],
    ['sub/a.tar~20220315-101112.gz', ['sub/a.tar.gz', '20220315-101112']],
    ['~20220315-101112.bashrc', ['.bashrc', '20220315-101112']],
    ['noext~20220315-101112', ['noext', '20220315-101112']],
    ['f.txt~20140101-010101', ['f.txt', '20140101-010101']],
    ['plain.txt', ['', '']],
    ['dir~x/file.txt', ['dir.txt', 'x/file']],
  ];
  for (const [path, expected] of cases) t.same(untagFilename(path), expected, path);
  t.equal(extractTag('a~b~c.d'), 'c', 'the last ~ counts');
});

t.test("a file's versions are its base with a 15-character time tag, glob characters literal", async (t) => {
  inTimeZone(t, zone);
  t.ok(isVersionOf('f.txt', 'f~20220315-101112.txt'));
  t.ok(isVersionOf('[1].txt', '[1]~20220315-101112.txt'));
  t.ok(isVersionOf('.bashrc', '~20220315-101112.bashrc'));
  for (const other of ['f~20220315-10111.txt', 'f~20220315-101112.txt.bak', 'g~20220315-101112.txt', 'f.txt'])
    t.notOk(isVersionOf('f.txt', other), other);
  t.notOk(isVersionOf('[1].txt', '1~20220315-101112.txt'), 'not a glob: [1] is not 1');
});

t.test("params read as Go's strconv.Atoi reads them", async (t) => {
  inTimeZone(t, zone);
  t.equal(goAtoi('5'), 5);
  t.equal(goAtoi('+7'), 7);
  t.equal(goAtoi('-3'), -3);
  for (const bad of [undefined, '', ' 5', '5.0', '5 ', '0x10', '1_000', '9223372036854775808'])
    t.equal(goAtoi(bad), undefined, String(bad));
  t.equal(goAtoi('9223372036854775807'), Number(2n ** 63n - 1n), 'the largest int64');
});
