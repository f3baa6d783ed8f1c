import type { QueryInterface } from 'sequelize';
import { createTriggers, dropTriggers, type TriggerSql } from './triggers';
import { countsOf, dimensionsOf, takeOff, triggersOf, type Counted } from './066_record_counts_by_value';

export const name = '067_article_comment_counts';

/**
 * The article comment list (`GET /api/selfservice/comment`) grows with a knowledge base's readers:
 * its `count` read every comment (or, by `status`, every one of that status: most are published),
 * and its `rating` and `article_id` orders, which no index held in id order within them, sorted
 * every comment.
 *
 * Counted in `record_counts` (kind `comment`, scope 0; by `status` too, migration 066's filter
 * rows) by triggers on `article_comments`. Two deletes cascade to comments, and InnoDB's cascades
 * run no trigger, so each takes the comments it is about to delete off first: an article's, all
 * of its comments; a comment's, its replies and theirs (the subtree under it, read recursively by
 * `parent_id`; the comment itself leaves by its own delete trigger). Indexed by `rating` and by
 * `article_id` alone (each with the primary key after it: the list's order and its id tie-break).
 * A list narrowed by an article sorts that article's comments in another order (a few hundred).
 */

const COMMENTS: Counted = { table: 'article_comments', kind: () => "'comment'", scope: () => '0', by: { status: (r) => `${r}.status` } };

/** The replies under comment `OLD.id`, at any depth. */
export const SUBTREE = `article_comments.id IN (WITH RECURSIVE subtree (id) AS (
      SELECT id FROM article_comments WHERE parent_id = OLD.id
      UNION ALL SELECT c.id FROM article_comments c JOIN subtree s ON c.parent_id = s.id
    ) SELECT id FROM subtree)`;

const TRIGGER_SQL: TriggerSql = {
  ...triggersOf(COMMENTS),
  articles_record_counts_cascade: `BEFORE DELETE ON articles FOR EACH ROW BEGIN
    ${takeOff(COMMENTS, 'article_comments.article_id = OLD.id')}
  END`,
  article_comments_record_counts_cascade: `BEFORE DELETE ON article_comments FOR EACH ROW BEGIN
    ${takeOff(COMMENTS, SUBTREE)}
  END`,
};

const INDEXES = { article_comments_rating: 'rating', article_comments_article_id: 'article_id' };

export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query(`ALTER TABLE article_comments ${Object.entries(INDEXES).map(([n, cols]) => `ADD INDEX ${n} (${cols})`).join(', ')}`);
  await createTriggers(q, TRIGGER_SQL);
  // After the triggers (migrations run before the web processes start: nothing else writes now).
  await q.sequelize.query("DELETE FROM record_counts WHERE kind = 'comment'");
  for (const d of dimensionsOf(COMMENTS)) await q.sequelize.query(countsOf(COMMENTS, d, '1 = 1', 1));
}

export async function down(q: QueryInterface): Promise<void> {
  await dropTriggers(q, TRIGGER_SQL);
  await q.sequelize.query("DELETE FROM record_counts WHERE kind = 'comment'");
  await q.sequelize.query(`ALTER TABLE article_comments ${Object.keys(INDEXES).map((n) => `DROP INDEX ${n}`).join(', ')}`);
}
