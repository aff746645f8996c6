import t from 'tap';
import { MAX_RECENT_ERRORS, RecentErrors } from '../../shared/recent-errors.ts';

const error = (n: number) => ({ when: new Date(n).toISOString(), message: `error ${n}`, level: 50 });

t.test('only the newest errors are kept, oldest first', async (t) => {
  const errors = new RecentErrors();
  for (let n = 0; n < MAX_RECENT_ERRORS + 5; n++) errors.add(error(n));
  const list = errors.list();
  t.equal(list.length, MAX_RECENT_ERRORS);
  t.equal(list[0]?.message, 'error 5');
  t.equal(list.at(-1)?.message, `error ${MAX_RECENT_ERRORS + 4}`);
});

t.test('the list starts with the initial errors and clear empties it', async (t) => {
  const errors = new RecentErrors([error(1)]);
  t.same(errors.list(), [error(1)]);
  errors.list().pop();
  t.equal(errors.list().length, 1, 'callers get a copy');
  errors.clear();
  t.same(errors.list(), []);
});
