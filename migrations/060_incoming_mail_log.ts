import type { QueryInterface } from 'sequelize';
import { createTriggers, dropTriggers, type TriggerSql } from './triggers';
import { countChange, countsOf } from './057_record_counts_scoped';

export const name = '060_incoming_mail_log';

/**
 * The incoming mail log (`GET /api/ticket/incomingmail`: what became of every mail the mailboxes
 * fetched) grows with every mail received and is never pruned: its `count` read every entry, and
 * its `updated_at` order, which no index held, sorted them all. Counted in `record_counts`
 * (migrations 056, 057; kind `incoming`, scope 0) by triggers on `incoming_mails` (nothing
 * cascades a delete to them: a department address's delete leaves its mails without one), and
 * indexed by `updated_at`.
 */

const KIND = "'incoming'";
const change = (row: 'NEW' | 'OLD', n: 1 | -1) => countChange(KIND, '0', row, n);

/** This migration's triggers (066 writes some of them again). */
export const TRIGGER_SQL: TriggerSql = {
  incoming_mails_record_counts_insert: `AFTER INSERT ON incoming_mails FOR EACH ROW ${change('NEW', 1)}`,
  incoming_mails_record_counts_delete: `AFTER DELETE ON incoming_mails FOR EACH ROW ${change('OLD', -1)}`,
};

export async function up(q: QueryInterface): Promise<void> {
  await q.addIndex('incoming_mails', ['updated_at'], { name: 'incoming_mails_updated_at' });
  await createTriggers(q, TRIGGER_SQL);
  // After the triggers (migrations run before the web processes start: nothing else writes now).
  await q.sequelize.query(`DELETE FROM record_counts WHERE kind = ${KIND}`);
  await q.sequelize.query(countsOf(KIND, '0', 'incoming_mails'));
}

export async function down(q: QueryInterface): Promise<void> {
  await dropTriggers(q, TRIGGER_SQL);
  await q.sequelize.query(`DELETE FROM record_counts WHERE kind = ${KIND}`);
  await q.removeIndex('incoming_mails', 'incoming_mails_updated_at');
}
