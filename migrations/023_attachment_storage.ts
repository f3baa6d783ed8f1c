import type { QueryInterface } from 'sequelize';
import { DataTypes } from 'sequelize';

export const name = '023_attachment_storage';

/**
 * Attachments off the database (src/storage/): each upload names the store that holds its bytes,
 * `database` (its `contents` column, as before) or `directory` (a file under ATTACHMENTS_DIR,
 * `contents` NULL). The row, its metadata and the hash stay here in both cases, so whatever
 * references an upload still does it in one transaction. The index serves the move command's
 * resumable walk (`storage = ? AND id > ?`, by id).
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.changeColumn('uploads', 'contents', { type: DataTypes.BLOB('long'), allowNull: true });
  await q.addColumn('uploads', 'storage', { type: DataTypes.STRING(16), allowNull: false, defaultValue: 'database' });
  await q.addIndex('uploads', ['storage', 'id'], { name: 'uploads_storage' });
}

export async function down(q: QueryInterface): Promise<void> {
  // Only possible once every file is back in the database (`npm run attachments -- move --to database`).
  await q.removeIndex('uploads', 'uploads_storage');
  await q.removeColumn('uploads', 'storage');
  await q.changeColumn('uploads', 'contents', { type: DataTypes.BLOB('long'), allowNull: false });
}
