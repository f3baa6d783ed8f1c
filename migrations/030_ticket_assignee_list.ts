import type { QueryInterface } from 'sequelize';
import { createTriggers, dropTriggers, type TriggerSql } from './triggers';

export const name = '030_ticket_assignee_list';

/**
 * One operator's tickets by last update ("my tickets, latest first"): the list read every ticket
 * assigned to the operator and sorted them (an operator's 20,000 at 1M: 18 requests a second
 * under load, a sort of 37,000 rows in EXPLAIN). Walking the ticket list's `updated_at` index for
 * the operator's instead is only cheap when assignments do not follow the order.
 *
 * `ticket_assignee_list`: a row per assignee row, with a copy of what that list reads of its
 * ticket: `listed` (1 when the ticket is neither trashed nor merged), `status_id` and
 * `updated_at`; the index `ticket_assignee_list_updated` (user_id, listed, updated_at, ticket_id,
 * status_id) gives the page, a status tested on its entries (src/ticket/tickets/listPage.ts).
 * Kept by triggers: on ticket_assignees (a row added, removed or moved), and on tickets when an
 * update changes a copied value; a ticket's or a user's delete takes the rows by foreign key.
 *
 * A table of its own, not columns of ticket_assignees: a trigger on tickets that wrote
 * ticket_assignees would fail every statement that updates tickets while reading
 * ticket_assignees (deleting a person touches the tickets they are assigned to), MariaDB's error
 * 1442. No statement reads this table but the list. Write cost: one row write per assignee of a
 * ticket on each update of the ticket (replies and changes move updated_at).
 */

/** A link list's `listed` of the ticket `t` (a row alias, NEW or OLD): 1 when neither trashed nor merged, else 0 (migration 084 tells the trash apart). */
export type ListedOf = (t: string) => string;

const LISTED: ListedOf = (t) => `IF(${t}.deleted_at IS NULL AND ${t}.merged_into_id IS NULL, 1, 0)`;

/**
 * The ticket's column a copied column holds: its own name, but for `customer_id` (migration 083),
 * the ticket's `user_id` (the assignee list's `user_id` is the operator's).
 */
export const ticketColumn = (copied: string): string => (copied === 'customer_id' ? 'user_id' : copied);

/**
 * A list of a link table's rows with copies of what a list reads of their tickets: this
 * migration's of the assignee rows, migration 082's of the tag links. `key`: the link table's
 * column of the record (the operator, the tag), the list's too.
 */
export interface LinkList { list: string; links: string; key: string; /** The tickets trigger's name: tickets_<noun>_list_update. */ noun: string }

export const ASSIGNEE_LIST: LinkList = { list: 'ticket_assignee_list', links: 'ticket_assignees', key: 'user_id', noun: 'assignee' };

/**
 * The triggers that keep a link list with `copied` columns of the ticket (030's: status_id and
 * updated_at; migration 031 copies more, with the same triggers' names).
 */
export function linkListTriggerSql({ list, links, key, noun }: LinkList, copied: readonly string[], listed: ListedOf = LISTED): TriggerSql {
  /** The list row of the link row `row` (NEW or OLD of the link table), from its ticket. */
  const addRow = (row: string) => `INSERT INTO ${list} (${key}, ticket_id, listed, ${copied.join(', ')})
    SELECT ${row}.${key}, t.id, ${listed('t')}, ${copied.map((c) => `t.${ticketColumn(c)}`).join(', ')} FROM tickets t WHERE t.id = ${row}.ticket_id
    ON DUPLICATE KEY UPDATE listed = VALUES(listed), ${copied.map((c) => `${c} = VALUES(${c})`).join(', ')}`;
  const removeRow = (row: string) => `DELETE FROM ${list} WHERE ${key} = ${row}.${key} AND ticket_id = ${row}.ticket_id`;
  // `<=>`: a copied column may be NULL (031's due_time, last_reply_time).
  const changed = copied.map((c) => `NOT (OLD.${ticketColumn(c)} <=> NEW.${ticketColumn(c)})`).join(' OR ');
  return {
    [`${links}_list_insert`]: `AFTER INSERT ON ${links} FOR EACH ROW ${addRow('NEW')}`,
    [`${links}_list_delete`]: `AFTER DELETE ON ${links} FOR EACH ROW ${removeRow('OLD')}`,
    [`${links}_list_update`]: `AFTER UPDATE ON ${links} FOR EACH ROW
      IF NEW.ticket_id <> OLD.ticket_id OR NEW.${key} <> OLD.${key} THEN ${removeRow('OLD')}; ${addRow('NEW')}; END IF`,
    [`tickets_${noun}_list_update`]: `AFTER UPDATE ON tickets FOR EACH ROW
      IF ${changed} OR ${listed('OLD')} <> ${listed('NEW')} THEN
        UPDATE ${list} SET listed = ${listed('NEW')}, ${copied.map((c) => `${c} = NEW.${ticketColumn(c)}`).join(', ')} WHERE ticket_id = NEW.id;
      END IF`,
  };
}

export const assigneeListTriggerSql = (copied: readonly string[]): TriggerSql => linkListTriggerSql(ASSIGNEE_LIST, copied);

/** The rows from the links and their tickets, with `copied` columns of the ticket. */
export async function fillLinkListOf(q: QueryInterface, { list, links, key }: LinkList, copied: readonly string[], listed: ListedOf = LISTED): Promise<void> {
  await q.sequelize.query(`DELETE FROM ${list}`);
  await q.sequelize.query(`INSERT INTO ${list} (${key}, ticket_id, listed, ${copied.join(', ')})
    SELECT a.${key}, t.id, ${listed('t')}, ${copied.map((c) => `t.${ticketColumn(c)}`).join(', ')} FROM ${links} a JOIN tickets t ON t.id = a.ticket_id`);
}

export const fillAssigneeListOf = (q: QueryInterface, copied: readonly string[]): Promise<void> => fillLinkListOf(q, ASSIGNEE_LIST, copied);

const COPIED = ['status_id', 'updated_at'];
const TRIGGER_SQL = assigneeListTriggerSql(COPIED);

export const createAssigneeListTriggers = (q: QueryInterface): Promise<void> => createTriggers(q, TRIGGER_SQL);

export const dropAssigneeListTriggers = (q: QueryInterface): Promise<void> => dropTriggers(q, TRIGGER_SQL);

/** The rows from the assignments and their tickets. */
export const fillAssigneeList = (q: QueryInterface): Promise<void> => fillAssigneeListOf(q, COPIED);

export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query(`CREATE TABLE ticket_assignee_list (
    user_id INT UNSIGNED NOT NULL,
    ticket_id INT UNSIGNED NOT NULL,
    listed TINYINT UNSIGNED NOT NULL,
    status_id INT UNSIGNED NOT NULL,
    updated_at INT UNSIGNED NOT NULL,
    PRIMARY KEY (user_id, ticket_id),
    KEY ticket_assignee_list_ticket (ticket_id),
    KEY ticket_assignee_list_updated (user_id, listed, updated_at, ticket_id, status_id),
    CONSTRAINT ticket_assignee_list_ticket FOREIGN KEY (ticket_id) REFERENCES tickets (id) ON DELETE CASCADE,
    CONSTRAINT ticket_assignee_list_user FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
  ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
  await createAssigneeListTriggers(q);
  // After the triggers (migrations run before the web processes start: nothing else writes now).
  await fillAssigneeList(q);
}

export async function down(q: QueryInterface): Promise<void> {
  await dropAssigneeListTriggers(q);
  await q.dropTable('ticket_assignee_list');
}
