import { QueryTypes, type Transaction } from 'sequelize';
import { now } from '../../db/entity';
import { sequelize } from '../../db/sequelize';
import { emitAll } from '../../events';

/**
 * Articles whose categories, types or tags a change of another record altered (a category's delete
 * or move to another type, a type's or a tag's delete): their `updated_at` moves, so the export
 * sends them again, and each is an `article.updated` event (its `categories`, `types`, `tags` or
 * `frontend_url` changed as much as through its own PUT).
 */
export async function touchArticles(articleIds: number[], transaction: Transaction): Promise<void> {
  const ids = [...new Set(articleIds)].sort((a, b) => a - b);
  if (!ids.length) return;
  await sequelize().query('UPDATE articles SET updated_at = :at WHERE id IN (:ids)', {
    replacements: { at: now(), ids }, transaction, type: QueryTypes.UPDATE,
  });
  await emitAll(transaction, ids.map((articleId) => ({ name: 'article.updated', payload: { articleId } })));
}
