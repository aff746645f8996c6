import t from 'tap';
import { OwnWrites } from '../../../worker/folders/own-writes.ts';

t.test('a name is the service’s own while it is written, and no longer', async (t) => {
  const writes = new OwnWrites();
  t.notOk(writes.isOwn('a'), 'nothing written yet');
  writes.started('a');
  writes.started('b');
  t.ok(writes.isOwn('a'), 'while it is written');
  writes.finished('a');
  t.notOk(writes.isOwn('a'), 'not once written: a change right after is the user’s');
  t.ok(writes.isOwn('b'));
  writes.ended();
  t.notOk(writes.isOwn('b'), 'nor one whose pull ended without it');
});
