import t from 'tap';
import { OwnWrites } from '../../../worker/folders/own-writes.ts';

t.test('a name being written, or written a moment ago, is the service’s own', async (t) => {
  const writes = new OwnWrites(50);
  t.notOk(writes.isOwn('a'), 'nothing written yet');
  writes.started('a');
  await new Promise((resolve) => setTimeout(resolve, 80));
  t.ok(writes.isOwn('a'), 'while it is written, however long');
  writes.finished('a');
  t.ok(writes.isOwn('a'), 'just after');
  writes.started('b');
  writes.ended();
  await new Promise((resolve) => setTimeout(resolve, 80));
  t.notOk(writes.isOwn('a'), 'not once the grace period is over');
  t.notOk(writes.isOwn('b'), 'nor one whose pull ended without it');
});
