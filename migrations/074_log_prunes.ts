import type { QueryInterface } from 'sequelize';

export const name = '074_log_prunes';

/**
 * How far each pruned log has been removed (`log_prunes`): one row per log whose ids are removed
 * oldest first, every id up to `through_id` gone (the event feed's: src/core/eventPrune.ts). A
 * feed cursor below it may have missed events and is refused, so a reader never skips what was
 * pruned without knowing it. Written in the transaction of each removal.
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query(`CREATE TABLE log_prunes (
    log VARCHAR(32) CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY,
    through_id INT UNSIGNED NOT NULL,
    pruned_at INT UNSIGNED NOT NULL
  ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
  // The row a removal locks first, so two at once take turns.
  await q.sequelize.query("INSERT INTO log_prunes (log, through_id, pruned_at) VALUES ('events', 0, 0)");
}

export async function down(q: QueryInterface): Promise<void> {
  await q.dropTable('log_prunes');
}
