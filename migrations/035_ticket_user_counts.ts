import type { QueryInterface } from 'sequelize';
import { createTriggers, dropTriggers, type TriggerSql } from './triggers';
import { COUNT_SLOTS } from './018_ticket_list_indexes';
import { personCountsTable } from './029_ticket_assignee_counts';

export const name = '035_ticket_user_counts';

/**
 * One customer's tickets at a million tickets: `user=<id>` (alone or with `status`: a customer's
 * open tickets, or an integration's account that opens a ticket per alert) COUNTed the customer's
 * entries of `tickets_filter_user_id`, every one of them (the benchmark's busy customer, 60,000
 * tickets at 1M: 99 ms with a status).
 *
 * `ticket_user_counts`: per customer, state (listed, trashed), status and slot (ticket id MOD 8:
 * an integration's parallel creates do not queue on one row's lock), the number of the customer's
 * tickets, merged ones not counted; the list sums them (src/ticket/tickets/listPage.ts), as it
 * sums an operator's (migration 029). Rows exist for the combinations a customer has: at most 8
 * per status and state, and one per ticket for customers of few tickets. Kept by triggers on
 * tickets in the statement that writes one: a create, a change of customer, status, state or
 * merge (from the old row to the new), a delete. A customer's delete deletes their tickets by
 * statement first (deleteTicketsOf: a cascaded delete runs no trigger); the customer's rows are
 * then all 0.
 */

const STATE = (row: string) => `IF(${row}.deleted_at IS NULL, 0, 1)`;

const add = (t: 'NEW' | 'OLD') => `INSERT INTO ticket_user_counts (user_id, state, status_id, slot, n)
  VALUES (${t}.user_id, ${STATE(t)}, ${t}.status_id, ${t}.id MOD ${COUNT_SLOTS}, 1)
  ON DUPLICATE KEY UPDATE n = n + 1`;

const remove = (t: 'NEW' | 'OLD') => `UPDATE ticket_user_counts SET n = n - 1
  WHERE user_id = ${t}.user_id AND state = ${STATE(t)} AND status_id = ${t}.status_id AND slot = ${t}.id MOD ${COUNT_SLOTS}`;

const TRIGGER_SQL: TriggerSql = {
  tickets_user_counts_insert: `AFTER INSERT ON tickets FOR EACH ROW
    IF NEW.merged_into_id IS NULL THEN ${add('NEW')}; END IF`,
  tickets_user_counts_update: `AFTER UPDATE ON tickets FOR EACH ROW
    IF NOT (OLD.user_id <=> NEW.user_id) OR ${STATE('OLD')} <> ${STATE('NEW')} OR OLD.status_id <> NEW.status_id OR NOT (OLD.merged_into_id <=> NEW.merged_into_id) THEN
      IF OLD.merged_into_id IS NULL THEN ${remove('OLD')}; END IF;
      IF NEW.merged_into_id IS NULL THEN ${add('NEW')}; END IF;
    END IF`,
  tickets_user_counts_delete: `AFTER DELETE ON tickets FOR EACH ROW
    IF OLD.merged_into_id IS NULL THEN ${remove('OLD')}; END IF`,
};

/** The triggers that keep the counts (the benchmark drops them for its bulk load, then fills the counts). */
export const createUserCountTriggers = (q: QueryInterface): Promise<void> => createTriggers(q, TRIGGER_SQL);

export const dropUserCountTriggers = (q: QueryInterface): Promise<void> => dropTriggers(q, TRIGGER_SQL);

/** The counts from the tickets themselves (the migration, and the benchmark after its bulk load). */
export async function fillUserCounts(q: QueryInterface): Promise<void> {
  await q.sequelize.query('DELETE FROM ticket_user_counts');
  await q.sequelize.query(`INSERT INTO ticket_user_counts (user_id, state, status_id, slot, n)
    SELECT user_id, ${STATE('tickets')}, status_id, id MOD ${COUNT_SLOTS}, COUNT(*)
    FROM tickets WHERE merged_into_id IS NULL GROUP BY 1, 2, 3, 4`);
}

export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query(personCountsTable('ticket_user_counts'));
  await createUserCountTriggers(q);
  // After the triggers (migrations run before the web processes start: nothing else writes now).
  await fillUserCounts(q);
}

export async function down(q: QueryInterface): Promise<void> {
  await dropUserCountTriggers(q);
  await q.dropTable('ticket_user_counts');
}
