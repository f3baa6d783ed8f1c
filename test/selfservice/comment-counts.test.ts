/**
 * The article comment list reads its `count` from the record counters (migration 067): narrowed by
 * nothing or by its `status` alone, or by an article and its status (077), exact whatever writes
 * or deletes comments (the API, statements, a reply's delete that cascades to the replies under
 * it, an article's delete that cascades to its comments; InnoDB's cascades run no trigger), with
 * no COUNT over the comments; any other filter counts its matches. Its `rating` and `article_id`
 * orders read an index, never a sort, and so does every order of one article's comments.
 */
import { QueryTypes } from 'sequelize';
import { capture, explainOf } from '../../bench/capture';
import { execute, select } from '../../src/db/select';
import { sequelize } from '../../src/db/sequelize';
import { useApi } from '../helpers/app';
import { expectDeleted, expectList, expectSuccess } from '../helpers/envelope';
import { builderPagePlan, measureList } from '../helpers/queries';
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

/**
 * The counts narrowed by nothing and by each status, and of each of `articles` alone and by each
 * status (migration 077), checked to come from the counters and to be the comments' own.
 */
async function expectCounts(articles: number[] = []) {
  const all = await listed();
  expect(all).toEqual({ count: await counted(), countedTable: false });
  const byStatus = [];
  for (const status of [0, 1, 2]) {
    const one = await listed({ status });
    expect(one).toEqual({ count: await counted('status = :status', { status }), countedTable: false });
    byStatus.push(one.count);
  }
  const byArticle = [];
  for (const id of articles) {
    const of = [await listed({ article_id: id })];
    expect(of[0]).toEqual({ count: await counted('article_id = :id', { id }), countedTable: false });
    for (const status of [0, 1, 2]) {
      of.push(await listed({ article_id: id, status }));
      expect({ id, status, ...of[of.length - 1] }).toEqual({ id, status, count: await counted('article_id = :id AND status = :status', { id, status }), countedTable: false });
    }
    byArticle.push(of.map((x) => x.count));
  }
  return { all: all.count, byStatus, byArticle };
}

const comment = async (body: Record<string, unknown>) =>
  expectSuccess(await api.post(BASE, { name: 'Guest', text: 'Counted, thanks.', ...body }), 'Successfully created new comment!');

describe('article comment counts from the record counters', () => {
  it('count comments, of all statuses and of one, of an article and of its status, as they are made, moderated and deleted with their replies and articles', async () => {
    const start = await expectCounts();
    const [article, other] = [await make.article(), await make.article()];
    const articles = [article.id, other.id];
    const root = await comment({ article_id: article.id });
    const reply = await comment({ article_id: article.id, parent_id: root.id, status: 1 });
    const deeper = await comment({ article_id: article.id, parent_id: reply.id, status: 1 });
    await comment({ article_id: article.id, parent_id: deeper.id });
    const sibling = await comment({ article_id: article.id, parent_id: root.id, status: 2 });
    await comment({ article_id: other.id, status: 1 });
    let now = await expectCounts(articles);
    expect(now.all).toBe(start.all + 6);
    expect(now.byStatus).toEqual([start.byStatus[0] + 2, start.byStatus[1] + 3, start.byStatus[2] + 1]);
    expect(now.byArticle).toEqual([[5, 2, 2, 1], [1, 0, 1, 0]]);

    // Moderation moves a comment between its status's counts.
    expectSuccess(await api.put(`${BASE}/${root.id}`, { status: 1 }), 'Successfully updated the comment!');
    now = await expectCounts(articles);
    expect(now.byStatus).toEqual([start.byStatus[0] + 1, start.byStatus[1] + 4, start.byStatus[2] + 1]);
    expect(now.byArticle).toEqual([[5, 1, 3, 1], [1, 0, 1, 0]]);

    // A reply's delete cascades to the replies under it, at every depth; its sibling stays.
    expectDeleted(await api.del(`${BASE}/${reply.id}`), 'comment');
    expect(await counted('article_id = :id', { id: article.id })).toBe(2);
    now = await expectCounts(articles);
    expect(now.all).toBe(start.all + 3);
    expect(now.byStatus).toEqual([start.byStatus[0], start.byStatus[1] + 2, start.byStatus[2] + 1]);
    expect(now.byArticle).toEqual([[2, 0, 1, 1], [1, 0, 1, 0]]);

    // Comments written, moved to another article and deleted by statements of their own.
    await execute(`INSERT INTO article_comments (article_id, name, text, status, notify_reply, created_at, updated_at)
      SELECT :id, 'Raw', 'Raw', seq MOD 3, 0, 0, 0 FROM seq_1_to_6`, { id: article.id }, undefined);
    await execute('DELETE FROM article_comments WHERE id = :id', { id: sibling.id }, undefined);
    await execute("UPDATE article_comments SET article_id = :other WHERE article_id = :id AND name = 'Raw' AND status = 0", { id: article.id, other: other.id }, undefined);
    now = await expectCounts(articles);
    expect(now.all).toBe(start.all + 8);
    expect(now.byArticle).toEqual([[5, 0, 3, 2], [3, 2, 1, 0]]);

    // Another filter beside them counts its matches.
    expect(await listed({ status: 1, article_id: article.id, parent_id: 0 })).toEqual({ count: 3, countedTable: true });

    // An article's delete cascades to its comments: its counters go to 0, the other's stay.
    expectDeleted(await api.del(`/api/selfservice/article/${article.id}`), 'article');
    expect(await counted('article_id = :id', { id: article.id })).toBe(0);
    now = await expectCounts(articles);
    expect(now.byArticle).toEqual([[0, 0, 0, 0], [3, 2, 1, 0]]);
    expectDeleted(await api.del(`/api/selfservice/article/${other.id}`), 'article');
    expect(await expectCounts(articles)).toEqual({ ...start, byArticle: [[0, 0, 0, 0], [0, 0, 0, 0]] });
    expect(await select("SELECT * FROM record_counts WHERE kind = 'article_comment' AND scope_id IN (:articles) AND n <> 0", { articles })).toEqual([]);
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
        const rows = await builderPagePlan(statements, 'article_comments');
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

  it("reads one article's comments in any order from an index range (migration 077), not a sort of them", async () => {
    const article = await make.article();
    await execute(`INSERT INTO article_comments (article_id, name, text, rating, status, notify_reply, created_at, updated_at)
      SELECT :id, 'Plan', 'Plan', CAST(seq MOD 7 AS SIGNED) - 3, seq MOD 3, 0, 1700000000 + (seq * 37) MOD 400, 1700000000 + (seq * 53) MOD 400
      FROM seq_1_to_400`, { id: article.id }, undefined);
    await select('ANALYZE TABLE article_comments', {});
    const indexOf: Record<string, string> = {
      created_at: 'article_comments_article_created_at', updated_at: 'article_comments_article_updated_at', rating: 'article_comments_article_rating',
      status: 'article_comments_article_id_status', id: 'article_comments_article_id', article_id: 'article_comments_article_id',
    };
    const mine = (await select<Record<string, number>>('SELECT * FROM article_comments WHERE article_id = :id', { id: article.id }));
    for (const [order_column, key] of Object.entries(indexOf)) {
      for (const order_direction of ['asc', 'desc']) {
        const q = { limit: 5, start: 11, order_column, order_direction, article_id: article.id };
        const { statements, result } = await capture(() => api.get(BASE, q));
        const rows = await builderPagePlan(statements, 'article_comments');
        expect(rows.map((r) => ({ order_column, order_direction, key: r.key, filesort: /filesort/.test(r.Extra ?? '') })))
          .toEqual([{ order_column, order_direction, key, filesort: false }]);
        // The page asked: the article's comments in that order, ties by id, from the 11th.
        const sign = order_direction === 'asc' ? 1 : -1;
        const want = [...mine].sort((a, b) => sign * (a[order_column] - b[order_column] || a.id - b.id)).slice(10, 15).map((c) => c.id);
        expect({ order_column, order_direction, ids: expectList(result).map((c: any) => c.id) }).toEqual({ order_column, order_direction, ids: want });
      }
    }
    // Its published comments in id order: the (article_id, status) index's range.
    const { statements, result } = await capture(() => api.get(BASE, { limit: 5, article_id: article.id, status: 1 }));
    const rows = await builderPagePlan(statements, 'article_comments');
    expect(rows.map((r) => ({ key: r.key, filesort: /filesort/.test(r.Extra ?? '') }))).toEqual([{ key: 'article_comments_article_id_status', filesort: false }]);
    const published = mine.filter((c) => c.status === 1).map((c) => c.id).sort((a, b) => a - b);
    expect({ ids: expectList(result).map((c: any) => c.id), count: result.body.count }).toEqual({ ids: published.slice(0, 5), count: published.length });
  });

  it("reads one article's published comments, and its top-level ones, in a time or rating order from an index range (migration 078), not an intersection and a sort", async () => {
    // Enough comments, half of them one article's and nine tenths published, that the optimiser
    // intersected the article's, the status's and the parent's indexes (at 20,000 it does).
    const [article, other] = [await make.article(), await make.article()];
    await execute(`INSERT INTO article_comments (article_id, name, text, rating, status, notify_reply, created_at, updated_at)
      SELECT IF(seq MOD 2 = 0, :article, :other), 'Plan', 'Plan', CAST(seq MOD 7 AS SIGNED) - 3, IF(seq MOD 10 = 0, 0, 1), 0,
        1700000000 + (seq * 37) MOD 90000, 1700000000 + (seq * 53) MOD 90000
      FROM seq_1_to_20000`, { article: article.id, other: other.id }, undefined);
    // A few replies, so that `parent_id=0` leaves some out.
    await execute(`UPDATE article_comments SET parent_id = (SELECT MIN(c.id) FROM (SELECT id FROM article_comments WHERE article_id = :id) AS c)
      WHERE article_id = :id AND id MOD 97 = 0`, { id: article.id }, undefined);
    try {
      await select('ANALYZE TABLE article_comments', {});
      const mine = await select<Record<string, number>>('SELECT * FROM article_comments WHERE article_id = :id AND status = 1', { id: article.id });
      for (const parent_id of [undefined, 0]) {
        const listedOnes = mine.filter((c) => parent_id === undefined || c.parent_id === null);
        expect(listedOnes.length < mine.length).toBe(parent_id === 0);
        for (const order_column of ['created_at', 'updated_at', 'rating']) {
          for (const order_direction of ['asc', 'desc']) {
            const q = { limit: 5, start: 11, order_column, order_direction, article_id: article.id, status: 1, ...(parent_id === undefined ? {} : { parent_id }) };
            const { statements, result } = await capture(() => api.get(BASE, q));
            const rows = await builderPagePlan(statements, 'article_comments');
            expect(rows.map((r) => ({ parent_id, order_column, order_direction, key: r.key, filesort: /filesort/.test(r.Extra ?? '') })))
              .toEqual([{ parent_id, order_column, order_direction, key: `article_comments_article_status_${order_column}`, filesort: false }]);
            const sign = order_direction === 'asc' ? 1 : -1;
            const want = [...listedOnes].sort((a, b) => sign * (a[order_column] - b[order_column] || a.id - b.id)).slice(10, 15).map((c) => c.id);
            expect({ q, ids: expectList(result).map((c: any) => c.id), count: result.body.count }).toEqual({ q, ids: want, count: listedOnes.length });
            // The top-level ones are counted by their matches: without intersecting the indexes either.
            const counts = statements.filter((st) => /COUNT\(\*\)[^;]*FROM `article_comments`/.test(st.sql));
            expect(counts).toHaveLength(parent_id === undefined ? 0 : 1);
            for (const st of counts) {
              const plan = await sequelize().query<Record<string, any>>(explainOf(st.sql), { replacements: st.params, type: QueryTypes.SELECT });
              expect(plan.map((r) => r.type)).not.toContain('index_merge');
            }
          }
        }
      }
    } finally {
      // The articles' deletes take their comments with them (one statement each, not a row's cascade per comment).
      await execute('DELETE FROM articles WHERE id IN (:ids)', { ids: [article.id, other.id] }, undefined);
    }
  });
});
