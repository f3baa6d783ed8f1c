import type { QueryInterface } from 'sequelize';

export const name = '030_ticket_assignee_order';

/**
 * One operator's tickets by last update ("my tickets, latest first"): the list read every ticket
 * assigned to the operator and sorted them (an operator's 20,000 at 1M: 18 requests a second
 * under load, a sort of 37,000 rows in EXPLAIN). Walking the ticket list's `updated_at` index for
 * the operator's instead is only cheap when assignments do not follow the order.
 *
 * `ticket_assignees` gains a copy of what that list reads of its ticket: `listed` (1 when the
 * ticket is neither trashed nor merged), `status_id` and `updated_at`, and the index
 * `ticket_assignees_updated` (user_id, listed, updated_at, ticket_id, status_id): the page is that
 * index's range for the operator, a status tested on its entries (src/ticket/tickets/listPage.ts).
 * Kept by triggers: an assignee row takes its ticket's values when written (BEFORE INSERT, and
 * BEFORE UPDATE when it moves to another ticket); an update of a ticket that changes them copies
 * them to its rows. Write cost: one row (and its index entry) per assignee of a ticket on each
 * update of the ticket (replies and changes move updated_at).
 */

const LISTED = (t: string) => `IF(${t}.deleted_at IS NULL AND ${t}.merged_into_id IS NULL, 1, 0)`;

/** The assignee row `NEW` takes its ticket's values. */
const copyFromTicket = `SET NEW.listed = COALESCE((SELECT ${LISTED('t')} FROM tickets t WHERE t.id = NEW.ticket_id), 0),
      NEW.status_id = COALESCE((SELECT t.status_id FROM tickets t WHERE t.id = NEW.ticket_id), 0),
      NEW.updated_at = COALESCE((SELECT t.updated_at FROM tickets t WHERE t.id = NEW.ticket_id), 0)`;

const TRIGGER_SQL: Record<string, string> = {
  ticket_assignees_order_insert: `BEFORE INSERT ON ticket_assignees FOR EACH ROW ${copyFromTicket}`,
  ticket_assignees_order_update: `BEFORE UPDATE ON ticket_assignees FOR EACH ROW
    IF NEW.ticket_id <> OLD.ticket_id THEN ${copyFromTicket}; END IF`,
  // Only when a copied value changed: the flag `assigned` that an assignee row's own triggers set
  // on the ticket (migration 025) changes none, so this never writes ticket_assignees while a
  // statement on it is running (MariaDB's error 1442).
  tickets_assignee_order_update: `AFTER UPDATE ON tickets FOR EACH ROW
    IF OLD.updated_at <> NEW.updated_at OR OLD.status_id <> NEW.status_id OR ${LISTED('OLD')} <> ${LISTED('NEW')} THEN
      UPDATE ticket_assignees SET listed = ${LISTED('NEW')}, status_id = NEW.status_id, updated_at = NEW.updated_at WHERE ticket_id = NEW.id;
    END IF`,
};
const TRIGGERS = Object.keys(TRIGGER_SQL);

export async function createAssigneeOrderTriggers(q: QueryInterface): Promise<void> {
  for (const t of TRIGGERS) await q.sequelize.query(`CREATE TRIGGER ${t} ${TRIGGER_SQL[t]}`);
}

export async function dropAssigneeOrderTriggers(q: QueryInterface): Promise<void> {
  for (const t of TRIGGERS) await q.sequelize.query(`DROP TRIGGER IF EXISTS ${t}`);
}

/** Every assignee row's copy from its ticket (the migration, and the benchmark after its bulk load). */
export async function fillAssigneeOrder(q: QueryInterface): Promise<void> {
  await q.sequelize.query(`UPDATE ticket_assignees a JOIN tickets t ON t.id = a.ticket_id
    SET a.listed = ${LISTED('t')}, a.status_id = t.status_id, a.updated_at = t.updated_at`);
}

export async function up(q: QueryInterface): Promise<void> {
  // Migrations run before the web processes start: nothing else writes meanwhile.
  await q.sequelize.query(`ALTER TABLE ticket_assignees
    ADD COLUMN listed TINYINT UNSIGNED NOT NULL DEFAULT 0,
    ADD COLUMN status_id INT UNSIGNED NOT NULL DEFAULT 0,
    ADD COLUMN updated_at INT UNSIGNED NOT NULL DEFAULT 0`);
  await fillAssigneeOrder(q);
  await q.sequelize.query('ALTER TABLE ticket_assignees ADD INDEX ticket_assignees_updated (user_id, listed, updated_at, ticket_id, status_id)');
  await createAssigneeOrderTriggers(q);
}

export async function down(q: QueryInterface): Promise<void> {
  await dropAssigneeOrderTriggers(q);
  await q.sequelize.query('ALTER TABLE ticket_assignees DROP INDEX ticket_assignees_updated, DROP COLUMN listed, DROP COLUMN status_id, DROP COLUMN updated_at');
}
