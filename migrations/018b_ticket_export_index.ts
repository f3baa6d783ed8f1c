import type { QueryInterface } from 'sequelize';

export const name = '018b_ticket_export_index';

/**
 * The incremental export (src/export/feed.ts) reads every ticket, trashed and merged ones too, in
 * `(updated_at, id)` order after a cursor. Migration 018 dropped the single `updated_at` index
 * (the list reads `tickets_list_updated_at`, which starts with `deleted_at, merged_into_id` and so
 * holds only one state in that order): without this one, each export page of the tickets sorted
 * every ticket changed after the cursor.
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.addIndex('tickets', ['updated_at', 'id'], { name: 'tickets_export_keyset' });
}

export async function down(q: QueryInterface): Promise<void> {
  await q.removeIndex('tickets', 'tickets_export_keyset');
}
