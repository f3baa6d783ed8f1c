import type { QueryInterface } from 'sequelize';
import { createTriggers, dropTriggers, type TriggerSql } from './triggers';
import { countChange, countsOf } from './057_record_counts_scoped';

export const name = '059_mail_log_counts';

/**
 * The mail log (`GET /api/core/mail`: the mail queue's outbox entries) at scale. The outbox keeps
 * every side effect's entry (mail, webhook deliveries, housekeeping) and had no index on the
 * queue: the log's `count` read every entry of every queue (1.4 s at two million entries) and its
 * `created_at` order sorted the mail's (1.2 s). Indexes led by the queue give the log a range in
 * id, `created_at` and `type` (`name`) order, and `record_counts` (migrations 056, 057) the number
 * of the mail queue's entries (kind `mail`, scope 0), kept by triggers on the outbox: the log
 * narrowed by nothing sums them. Nothing cascades to the outbox.
 */

const MAIL = "'mail'";

const change = (row: 'NEW' | 'OLD', n: 1 | -1) => `IF ${row}.queue = ${MAIL} THEN ${countChange(MAIL, '0', row, n)}; END IF`;

/** This migration's triggers (066 writes some of them again). */
export const TRIGGER_SQL: TriggerSql = {
  outbox_record_counts_insert: `AFTER INSERT ON outbox FOR EACH ROW ${change('NEW', 1)}`,
  outbox_record_counts_delete: `AFTER DELETE ON outbox FOR EACH ROW ${change('OLD', -1)}`,
  // An entry never changes queue; were one to, it would move between counts.
  outbox_record_counts_update: `AFTER UPDATE ON outbox FOR EACH ROW IF NOT (OLD.queue <=> NEW.queue) THEN BEGIN
    ${change('OLD', -1)}; ${change('NEW', 1)}; END; END IF`,
};

const INDEXES = { outbox_queue_id: 'queue', outbox_queue_created_at: 'queue, created_at', outbox_queue_name: 'queue, name' };

export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query(`ALTER TABLE outbox ${Object.entries(INDEXES).map(([n, cols]) => `ADD INDEX ${n} (${cols})`).join(', ')}`);
  await createTriggers(q, TRIGGER_SQL);
  // After the triggers (migrations run before the web processes start: nothing else writes now).
  await q.sequelize.query("DELETE FROM record_counts WHERE kind = 'mail'");
  await q.sequelize.query(countsOf(MAIL, '0', 'outbox', `queue = ${MAIL}`));
}

export async function down(q: QueryInterface): Promise<void> {
  await dropTriggers(q, TRIGGER_SQL);
  await q.sequelize.query("DELETE FROM record_counts WHERE kind = 'mail'");
  await q.sequelize.query(`ALTER TABLE outbox ${Object.keys(INDEXES).map((n) => `DROP INDEX ${n}`).join(', ')}`);
}
