import type { QueryInterface } from 'sequelize';
import { DataTypes } from 'sequelize';
import { id, ref, tableOptions, timestamp } from './columns';

export const name = '021_export';

/**
 * The incremental export (src/export/): live records are read in `(updated_at, id)` order through
 * the `updated_at` index each exported table already has (InnoDB appends the primary key to a
 * secondary index, so that index is the keyset); a deleted record leaves a tombstone here, written
 * in the transaction of the delete, read in `(deleted_at, id)` order per resource.
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.createTable('export_tombstones', {
    id: id(),
    resource: { type: DataTypes.STRING(16), allowNull: false },
    record_id: ref(),
    deleted_at: timestamp(false),
  }, tableOptions);
  await q.addIndex('export_tombstones', ['resource', 'deleted_at'], { name: 'export_tombstones_keyset' });
}

export async function down(q: QueryInterface): Promise<void> {
  await q.dropTable('export_tombstones');
}
