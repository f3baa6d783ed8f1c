import type { QueryInterface } from 'sequelize';

export const name = '015_ticket_counter';

/** Slots of the counter: concurrent ticket writes update different rows (no single hot row lock). */
export const TICKET_COUNTER_SLOTS = 16;

const LISTED = (row: 'NEW' | 'OLD') => `(${row}.deleted_at IS NULL AND ${row}.merged_into_id IS NULL)`;

/**
 * The exact number of tickets the unfiltered list shows (not trashed, not merged into another),
 * kept by triggers in the statement that changes a ticket, whatever writes it: `count` of
 * `GET /api/ticket/ticket` without filters reads 16 rows instead of counting a million. Spread
 * over slots by ticket id, so parallel creates do not queue on one row's lock.
 */
export async function up(q: QueryInterface): Promise<void> {
  const sql = (s: string) => q.sequelize.query(s);
  await sql(`CREATE TABLE ticket_counters (
    slot TINYINT UNSIGNED NOT NULL PRIMARY KEY,
    listed BIGINT NOT NULL DEFAULT 0
  ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
  await sql(`INSERT INTO ticket_counters (slot, listed) SELECT s.seq, 0 FROM seq_0_to_${TICKET_COUNTER_SLOTS - 1} s`);
  await sql(`CREATE TRIGGER tickets_count_insert AFTER INSERT ON tickets FOR EACH ROW
    UPDATE ticket_counters SET listed = listed + ${LISTED('NEW')} WHERE slot = NEW.id MOD ${TICKET_COUNTER_SLOTS}`);
  await sql(`CREATE TRIGGER tickets_count_update AFTER UPDATE ON tickets FOR EACH ROW
    UPDATE ticket_counters SET listed = listed + ${LISTED('NEW')} - ${LISTED('OLD')} WHERE slot = OLD.id MOD ${TICKET_COUNTER_SLOTS}`);
  await sql(`CREATE TRIGGER tickets_count_delete AFTER DELETE ON tickets FOR EACH ROW
    UPDATE ticket_counters SET listed = listed - ${LISTED('OLD')} WHERE slot = OLD.id MOD ${TICKET_COUNTER_SLOTS}`);
  // After the triggers, so a ticket written meanwhile is not missed (migrations run before the
  // web processes start, so nothing else writes tickets now).
  await sql(`UPDATE ticket_counters c JOIN (
      SELECT id MOD ${TICKET_COUNTER_SLOTS} AS slot, COUNT(*) AS n FROM tickets WHERE deleted_at IS NULL AND merged_into_id IS NULL GROUP BY id MOD ${TICKET_COUNTER_SLOTS}
    ) t ON t.slot = c.slot SET c.listed = t.n`);
}

export async function down(q: QueryInterface): Promise<void> {
  for (const t of ['tickets_count_insert', 'tickets_count_update', 'tickets_count_delete']) await q.sequelize.query(`DROP TRIGGER IF EXISTS ${t}`);
  await q.dropTable('ticket_counters');
}
