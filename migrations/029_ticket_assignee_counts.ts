import type { QueryInterface } from 'sequelize';
import { createTriggers, dropTriggers, type TriggerSql } from './triggers';
import { COUNT_SLOTS } from './018_ticket_list_indexes';

export const name = '029_ticket_assignee_counts';

/**
 * An operator's own tickets at a million tickets: `assigned=<operator>` (alone or with `status`:
 * "my open tickets", an agent's everyday list) COUNTed every ticket assigned to the operator,
 * reading each one's row for its state (a busy agent's 20,000 over two years: 60 ms at 1M).
 *
 * `ticket_assignee_counts`: per operator, state (listed, trashed), status and slot (ticket id MOD
 * 8), the number of tickets assigned to the operator, merged ones not counted; the list sums them
 * (src/ticket/tickets/listPage.ts). Kept by triggers: on ticket_assignees (a ticket assigned, unassigned,
 * reassigned) reading the ticket's state and status, and on tickets (a change of status, state or
 * merge moves the ticket between rows for each of its operators; a ticket deleted leaves them,
 * BEFORE its DELETE: InnoDB's cascade to ticket_assignees runs no trigger). A ticket assigned to
 * two operators is in each one's rows, so only one operator's list is counted from them.
 */

const STATE = (row: string) => `IF(${row}.deleted_at IS NULL, 0, 1)`;

/** One more for each operator of the ticket `t` (a row of tickets), as it is now. */
const addFor = (t: 'NEW' | 'OLD', user: string, from: string) => `INSERT INTO ticket_assignee_counts (user_id, state, status_id, slot, n)
  SELECT ${user}, ${STATE(t)}, ${t}.status_id, ${t}.id MOD ${COUNT_SLOTS}, 1 ${from}
  ON DUPLICATE KEY UPDATE n = n + 1`;

/**
 * One less for each operator of the ticket `t`: a join from its assignee rows to their counts'
 * rows, in that order (STRAIGHT_JOIN; each count row by its primary key). Written first as `WHERE
 * user_id IN (SELECT user_id FROM ticket_assignees WHERE ticket_id = ...)`, which MariaDB 10.11
 * runs for a single-table UPDATE as a scan of the whole counts table, locking each row: every
 * status change, trash or merge, of an assigned ticket or not, waited for every other one's
 * transaction, and they deadlocked under load (migration 048 replaces the triggers). The
 * assignee rows are a derived table: named in the UPDATE itself, `ticket_assignees` was a table
 * the statement might update, so every UPDATE of a ticket opened it with its update triggers,
 * which read `tickets` (more instances of it, each with its triggers parsed: migration 100).
 */
const removeFor = (t: 'NEW' | 'OLD') => `UPDATE (SELECT user_id FROM ticket_assignees WHERE ticket_id = ${t}.id) a STRAIGHT_JOIN ticket_assignee_counts c
    ON c.user_id = a.user_id AND c.state = ${STATE(t)} AND c.status_id = ${t}.status_id AND c.slot = ${t}.id MOD ${COUNT_SLOTS}
  SET c.n = c.n - 1`;

/** An assignee row's ticket, when counted (not merged): the source of its state and status. */
const ticketOf = (ticketId: string) => `FROM tickets t WHERE t.id = ${ticketId} AND t.merged_into_id IS NULL`;
const assigneeAdd = (row: 'NEW' | 'OLD') => `INSERT INTO ticket_assignee_counts (user_id, state, status_id, slot, n)
  SELECT ${row}.user_id, ${STATE('t')}, t.status_id, t.id MOD ${COUNT_SLOTS}, 1 ${ticketOf(`${row}.ticket_id`)}
  ON DUPLICATE KEY UPDATE n = n + 1`;
const assigneeRemove = (row: 'NEW' | 'OLD') => `UPDATE ticket_assignee_counts c JOIN tickets t ON t.id = ${row}.ticket_id AND t.merged_into_id IS NULL
  SET c.n = c.n - 1
  WHERE c.user_id = ${row}.user_id AND c.state = ${STATE('t')} AND c.status_id = t.status_id AND c.slot = t.id MOD ${COUNT_SLOTS}`;

const TRIGGER_SQL: TriggerSql = {
  ticket_assignees_counts_insert: `AFTER INSERT ON ticket_assignees FOR EACH ROW ${assigneeAdd('NEW')}`,
  ticket_assignees_counts_delete: `AFTER DELETE ON ticket_assignees FOR EACH ROW ${assigneeRemove('OLD')}`,
  ticket_assignees_counts_update: `AFTER UPDATE ON ticket_assignees FOR EACH ROW
    IF NEW.ticket_id <> OLD.ticket_id OR NEW.user_id <> OLD.user_id THEN ${assigneeRemove('OLD')}; ${assigneeAdd('NEW')}; END IF`,
  tickets_assignee_counts_update: `AFTER UPDATE ON tickets FOR EACH ROW
    IF ${STATE('OLD')} <> ${STATE('NEW')} OR OLD.status_id <> NEW.status_id OR NOT (OLD.merged_into_id <=> NEW.merged_into_id) THEN
      IF OLD.merged_into_id IS NULL THEN ${removeFor('OLD')}; END IF;
      IF NEW.merged_into_id IS NULL THEN ${addFor('NEW', 'a.user_id', 'FROM ticket_assignees a WHERE a.ticket_id = NEW.id')}; END IF;
    END IF`,
  tickets_assignee_counts_delete: `BEFORE DELETE ON tickets FOR EACH ROW
    IF OLD.merged_into_id IS NULL THEN ${removeFor('OLD')}; END IF`,
};

/** The triggers that keep the counts (the benchmark drops them for its bulk load, then fills the counts). */
export const createAssigneeCountTriggers = (q: QueryInterface): Promise<void> => createTriggers(q, TRIGGER_SQL);

export const dropAssigneeCountTriggers = (q: QueryInterface): Promise<void> => dropTriggers(q, TRIGGER_SQL);

/** The counts from the assignments themselves (the migration, and the benchmark after its bulk load). */
export async function fillAssigneeCounts(q: QueryInterface): Promise<void> {
  await q.sequelize.query('DELETE FROM ticket_assignee_counts');
  await q.sequelize.query(`INSERT INTO ticket_assignee_counts (user_id, state, status_id, slot, n)
    SELECT a.user_id, ${STATE('t')}, t.status_id, t.id MOD ${COUNT_SLOTS}, COUNT(*)
    FROM ticket_assignees a JOIN tickets t ON t.id = a.ticket_id WHERE t.merged_into_id IS NULL GROUP BY 1, 2, 3, 4`);
}

/** A table of counts per person, state, status and slot: this one, and the customers' (migration 035). */
export const personCountsTable = (table: string) => `CREATE TABLE ${table} (
    user_id INT UNSIGNED NOT NULL,
    state TINYINT UNSIGNED NOT NULL,
    status_id INT UNSIGNED NOT NULL,
    slot TINYINT UNSIGNED NOT NULL,
    n BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (user_id, state, status_id, slot)
  ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`;

export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query(personCountsTable('ticket_assignee_counts'));
  await createAssigneeCountTriggers(q);
  // After the triggers (migrations run before the web processes start: nothing else writes now).
  await fillAssigneeCounts(q);
}

export async function down(q: QueryInterface): Promise<void> {
  await dropAssigneeCountTriggers(q);
  await q.dropTable('ticket_assignee_counts');
}
