import type { QueryInterface } from 'sequelize';

export const name = '078_article_comment_orders_by_status';

/**
 * One article's comments of one status in a time or rating order (`article_id=<id>&status=1`, in
 * `created_at`, `updated_at` or `rating` order: the published comments a self-service page shows):
 * migration 077's (article_id, <order>) indexes hold the order but not the status, and with
 * (article_id, status) beside them the optimiser intersected the article's and the status's indexes
 * and sorted every match (100-220 ms for an article of 100,000 comments, nine tenths published).
 * Indexed by (article_id, status, <order>), each with the primary key after it: such a page is an
 * index range, read as far as the page goes.
 */

const INDEXES = {
  article_comments_article_status_created_at: 'article_id, status, created_at',
  article_comments_article_status_updated_at: 'article_id, status, updated_at',
  article_comments_article_status_rating: 'article_id, status, rating',
};

export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query(`ALTER TABLE article_comments ${Object.entries(INDEXES).map(([n, cols]) => `ADD INDEX ${n} (${cols})`).join(', ')}`);
}

export async function down(q: QueryInterface): Promise<void> {
  await q.sequelize.query(`ALTER TABLE article_comments ${Object.keys(INDEXES).map((n) => `DROP INDEX ${n}`).join(', ')}`);
}
