import type { QueryInterface } from 'sequelize';

export const name = '023_attachment_storage';

/**
 * Attachments off the database (src/storage/): each upload names the store that holds its bytes,
 * `database` (its `contents` column, as before) or `directory` (a file under ATTACHMENTS_DIR,
 * `contents` NULL). The row, its metadata and the hash stay here in both cases, so whatever
 * references an upload still does it in one transaction. The index serves the move command's
 * resumable walk (`storage = ? AND id > ?`, by id).
 */
export async function up(q: QueryInterface): Promise<void> {
  // One ALTER: the table is rebuilt at most once.
  await q.sequelize.query(
    "ALTER TABLE uploads MODIFY contents LONGBLOB NULL, ADD COLUMN storage VARCHAR(16) NOT NULL DEFAULT 'database' AFTER contents, ADD INDEX uploads_storage (storage, id)",
  );
}

export async function down(q: QueryInterface): Promise<void> {
  // Only possible once every file is back in the database (`npm run attachments -- move --to database`).
  await q.sequelize.query('ALTER TABLE uploads DROP INDEX uploads_storage, DROP COLUMN storage, MODIFY contents LONGBLOB NOT NULL');
}
