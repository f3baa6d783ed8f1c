import type { QueryInterface } from 'sequelize';
import { createTriggers, dropTriggers, type TriggerSql } from './triggers';
import { countsOf, dimensionsOf, takeOff, triggersOf, type Counted } from './066_record_counts_by_value';
import { SUBTREE } from './067_article_comment_counts';

export const name = '077_article_comment_counts_by_article';

/**
 * One article's comments (`GET /api/selfservice/comment?article_id=<id>`, with `status=1` the
 * published ones a self-service page shows): migration 067 counts all comments and each status's,
 * so a list narrowed by an article COUNTed that article's comments, and in any order but id or
 * status sorted them (a popular article's thousands).
 *
 * Counted again per article in `record_counts` (kind `article_comment`, scope the article; by
 * `status` too), by triggers of their own beside 067's; the two cascades that delete comments
 * (an article's, a comment's replies) take them off these counters too, as 067's do. Indexed by
 * (article_id, created_at), (article_id, updated_at) and (article_id, rating), each with the
 * primary key after it: an article's comments in those orders are an index range (its status
 * order and its id order were already: `article_comments_article_id_status`,
 * `article_comments_article_id`).
 */

const BY_ARTICLE: Counted = {
  table: 'article_comments', name: 'article_comments_by_article', kind: () => "'article_comment'", scope: (r) => `${r}.article_id`,
  by: { status: (r) => `${r}.status` },
};

const TRIGGER_SQL: TriggerSql = {
  ...triggersOf(BY_ARTICLE),
  articles_article_comment_counts_cascade: `BEFORE DELETE ON articles FOR EACH ROW BEGIN
    ${takeOff(BY_ARTICLE, 'article_comments.article_id = OLD.id')}
  END`,
  article_comments_article_comment_counts_cascade: `BEFORE DELETE ON article_comments FOR EACH ROW BEGIN
    ${takeOff(BY_ARTICLE, SUBTREE)}
  END`,
};

const INDEXES = {
  article_comments_article_created_at: 'article_id, created_at',
  article_comments_article_updated_at: 'article_id, updated_at',
  article_comments_article_rating: 'article_id, rating',
};

export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query(`ALTER TABLE article_comments ${Object.entries(INDEXES).map(([n, cols]) => `ADD INDEX ${n} (${cols})`).join(', ')}`);
  await createTriggers(q, TRIGGER_SQL);
  // After the triggers (migrations run before the web processes start: nothing else writes now).
  await q.sequelize.query("DELETE FROM record_counts WHERE kind = 'article_comment'");
  for (const d of dimensionsOf(BY_ARTICLE)) await q.sequelize.query(countsOf(BY_ARTICLE, d, '1 = 1', 1));
}

export async function down(q: QueryInterface): Promise<void> {
  await dropTriggers(q, TRIGGER_SQL);
  await q.sequelize.query("DELETE FROM record_counts WHERE kind = 'article_comment'");
  await q.sequelize.query(`ALTER TABLE article_comments ${Object.keys(INDEXES).map((n) => `DROP INDEX ${n}`).join(', ')}`);
}
