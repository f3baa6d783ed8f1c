/**
 * The article comment list reads its `count` from the record counters (migration 067): narrowed by
 * nothing or by its `status` alone, exact whatever writes or deletes comments (the API, statements,
 * a reply's delete that cascades to the replies under it, an article's delete that cascades to
 * its comments; InnoDB's cascades run no trigger), with no COUNT over the comments; any other
 * filter counts its matches. Its `rating` and `article_id` orders read an index, never a sort.
 */
import { QueryTypes } from 'sequelize';
import { capture } from '../../bench/capture';
import { execute, select } from '../../src/db/select';
import { sequelize } from '../../src/db/sequelize';
import { useApi } from '../helpers/app';
import { expectDeleted, expectList, expectSuccess } from '../helpers/envelope';
import { measureList } from '../helpers/queries';
import { factories } from './support';

const api = useApi();
const make = factories(api);
const BASE = '/api/selfservice/comment';

const counted = async (where = '1 = 1', values: Record<string, unknown> = {}) =>
  Number((await select<{ n: number }>(`SELECT COUNT(*) AS n FROM article_comments WHERE ${where}`, values))[0].n);

/** The list's count and whether it COUNTed the comments (a page of one: the count is what is checked). */
async function listed(query: Record<string, unknown> = {}) {
  const { res, queries } = await measureList(api, BASE, { limit: 1, ...query });
  expectList(res);
  return { count: res.body.count as number, countedTable: queries.some((q) => /COUNT\(\*\)[^;]*FROM `article_comments`/.test(q)) };
}

/** The counts narrowed by nothing and by each status, checked to come from the counters and to be every comment's. */
async function expectCounts() {
  const all = await listed();
  expect(all).toEqual({ count: await counted(), countedTable: false });
  const byStatus = [];
  for (const status of [0, 1, 2]) {
    const one = await listed({ status });
    expect(one).toEqual({ count: await counted('status = :status', { status }), countedTable: false });
    byStatus.push(one.count);
  }
  return { all: all.count, byStatus };
}

const comment = async (body: Record<string, unknown>) =>
  expectSuccess(await api.post(BASE, { name: 'Guest', text: 'Counted, thanks.', ...body }), 'Successfully created new comment!');

describe('article comment counts from the record counters', () => {
  it('count comments, of all statuses and of one, as they are made, moderated and deleted with their replies and articles', async () => {
    const start = await expectCounts();
    const article = await make.article();
    const root = await comment({ article_id: article.id });
    const reply = await comment({ article_id: article.id, parent_id: root.id, status: 1 });
    const deeper = await comment({ article_id: article.id, parent_id: reply.id, status: 1 });
    await comment({ article_id: article.id, parent_id: deeper.id });
    const sibling = await comment({ article_id: article.id, parent_id: root.id, status: 2 });
    let now = await expectCounts();
    expect(now.all).toBe(start.all + 5);
    expect(now.byStatus).toEqual([start.byStatus[0] + 2, start.byStatus[1] + 2, start.byStatus[2] + 1]);

    // Moderation moves a comment between its status's counts.
    expectSuccess(await api.put(`${BASE}/${root.id}`, { status: 1 }), 'Successfully updated the comment!');
    now = await expectCounts();
    expect(now.byStatus).toEqual([start.byStatus[0] + 1, start.byStatus[1] + 3, start.byStatus[2] + 1]);

    // A reply's delete cascades to the replies under it, at every depth; its sibling stays.
    expectDeleted(await api.del(`${BASE}/${reply.id}`), 'comment');
    expect(await counted('article_id = :id', { id: article.id })).toBe(2);
    now = await expectCounts();
    expect(now.all).toBe(start.all + 2);
    expect(now.byStatus).toEqual([start.byStatus[0], start.byStatus[1] + 1, start.byStatus[2] + 1]);

    // Comments written and deleted by statements of their own.
    await execute(`INSERT INTO article_comments (article_id, name, text, status, notify_reply, created_at, updated_at)
      SELECT :id, 'Raw', 'Raw', seq MOD 3, 0, 0, 0 FROM seq_1_to_6`, { id: article.id }, undefined);
    await execute('DELETE FROM article_comments WHERE id = :id', { id: sibling.id }, undefined);
    now = await expectCounts();
    expect(now.all).toBe(start.all + 7);

    // Another filter beside the status counts its matches.
    expect(await listed({ status: 1, article_id: article.id })).toEqual({ count: 3, countedTable: true });

    // An article's delete cascades to its comments.
    expectDeleted(await api.del(`/api/selfservice/article/${article.id}`), 'article');
    expect(await counted('article_id = :id', { id: article.id })).toBe(0);
    expect(await expectCounts()).toEqual(start);
  });

  it('reads a page in rating and article order from an index, not a sort of every comment', async () => {
    const article = await make.article();
    // Enough comments that a sort of them would cost more than reading an index.
    await execute(`INSERT INTO article_comments (article_id, name, text, rating, status, notify_reply, created_at, updated_at)
      SELECT :id, 'Plan', 'Plan', CAST(seq MOD 7 AS SIGNED) - 3, 1, 0, 0, 0 FROM seq_1_to_400`, { id: article.id }, undefined);
    await select('ANALYZE TABLE article_comments', {});
    for (const order_column of ['rating', 'article_id']) {
      for (const order_direction of ['asc', 'desc']) {
        const { statements } = await capture(() => api.get(BASE, { limit: 5, order_column, order_direction }));
        const page = statements.find((st) => /FROM `article_comments`/.test(st.sql) && /ORDER BY[^;]*LIMIT/.test(st.sql));
        expect(page).toBeDefined();
        const rows = await sequelize().query<Record<string, any>>(`EXPLAIN ${page!.sql}`, { replacements: page!.params, type: QueryTypes.SELECT });
        expect(rows.map((r) => ({ order_column, key: r.key, filesort: /filesort/.test(r.Extra ?? '') })))
          .toEqual([{ order_column, key: `article_comments_${order_column}`, filesort: false }]);
      }
    }
    // The page is in the order asked, ties by id.
    const page = expectList(await api.get(BASE, { limit: 20, order_column: 'rating', order_direction: 'desc', article_id: article.id }));
    const keys = page.map((c: any) => [c.rating, c.id]);
    expect(keys).toEqual([...keys].sort((a, b) => b[0] - a[0] || b[1] - a[1]));
    expect(page[0].rating).toBe(3);
  });
});
