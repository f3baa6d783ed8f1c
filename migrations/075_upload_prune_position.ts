import type { QueryInterface } from 'sequelize';

export const name = '075_upload_prune_position';

/**
 * The walk over the uploads that removes those no attachment names (src/storage/uploadPrune.ts)
 * keeps its position in `log_prunes` (migration 074): `through_id` is the last upload id looked
 * at, 0 to start again from the first. The row is locked by each window of the walk, so two runs
 * at once take turns.
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query("INSERT IGNORE INTO log_prunes (log, through_id, pruned_at) VALUES ('uploads', 0, 0)");
}

export async function down(q: QueryInterface): Promise<void> {
  await q.sequelize.query("DELETE FROM log_prunes WHERE log = 'uploads'");
}
