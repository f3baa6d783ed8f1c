import type { QueryInterface } from 'sequelize';
import { ASSIGNEE_LIST, fillLinkListOf, linkListTriggerSql, type LinkList } from './030_ticket_assignee_list';
import { ASSIGNEE_ORDER_COLUMNS, createAssigneeListTriggers as create031Triggers, dropAssigneeListTriggers as drop031Triggers } from './031_ticket_assignee_orders';
import { TAG_LIST, createTagListTriggers as create082Triggers, dropTagListTriggers as drop082Triggers } from './082_ticket_tag_list';
import { createTriggers, dropTriggers } from './triggers';

export const name = '083_link_list_orders';

/**
 * One operator's or one tag's tickets in every order of the ticket list. Migrations 030, 031 and
 * 082 copy to the link lists the columns of the orders a queue is worked by; in the ticket's own
 * strings (`subject`, `number`), its customer, department, brand, channel, status and resolution
 * time, the page still read all of the operator's or tag's tickets and sorted them (a tag of a
 * tenth of a million tickets by subject: 250-290 ms, one request at a time), and walking the
 * order's own index instead is bounded only by every ticket (tags and assignments follow
 * subjects and customers: at 1M the subject order passed 600,000 tickets before the first 50 of
 * a tag of a tenth).
 *
 * Both lists get a copy of each of those columns (the customer as `customer_id`: the assignee
 * list's `user_id` is the operator) and an index (key, listed, <column>, ticket_id, status_id),
 * the status order's (key, listed, status_id, ticket_id), and the assignee list the id order's
 * (user_id, listed, ticket_id, status_id), which 082 gave the tag list: the page is a range of
 * the operator's or tag's rows in any order, however deep (src/ticket/tickets/listPage.ts,
 * LINK_LISTS). The triggers of 031 and 082 are replaced by the same triggers copying every
 * column (same names).
 *
 * Write cost: a link's row carries eight more index entries (nine in the assignee list); a
 * ticket's update rewrites its rows of both lists also when its number, subject, customer,
 * department, brand, channel or resolution time changes (a reply, which moves `updated_at`,
 * already rewrote them), and an index's entry only where its column moved.
 */

/** The columns added to both lists, with their types (NOT NULL ones a default, for the ALTER; the fill sets them). */
const ADDED: ReadonlyArray<[string, string]> = [
  ['number', "VARCHAR(64) NOT NULL DEFAULT ''"],
  ['subject', "VARCHAR(255) NOT NULL DEFAULT ''"],
  ['resolved_time', 'INT UNSIGNED NULL'],
  ['department_id', 'INT UNSIGNED NOT NULL DEFAULT 0'],
  ['brand_id', 'INT UNSIGNED NOT NULL DEFAULT 0'],
  ['channel_id', 'INT UNSIGNED NOT NULL DEFAULT 0'],
  ['customer_id', 'INT UNSIGNED NOT NULL DEFAULT 0'],
];

/**
 * The orders this migration indexes, by the list's columns: the added ones, the status (copied
 * since 030) and, in the assignee list, the id (082 gave the tag list its own).
 */
const indexed = ({ list }: LinkList): string[] => [...(list === ASSIGNEE_LIST.list ? ['id'] : []), ...ADDED.map(([c]) => c), 'status_id'];

/** An index's columns after the list's key and `listed`: the id order's and the status order's hold each once. */
const indexTail = (c: string): string => (c === 'id' ? 'ticket_id, status_id' : c === 'status_id' ? 'status_id, ticket_id' : `${c}, ticket_id, status_id`);

/** The list's column of an order of the ticket list (`user_id`, the customer: `customer_id`). */
export const listColumnOf = (order: string): string => (order === 'user_id' ? 'customer_id' : order);

/** Every order of the ticket list's sortable columns that a link list holds (listed tickets: `deleted_at`'s is the id's). */
export const LINK_ORDER_COLUMNS = [
  'id', 'updated_at', ...ASSIGNEE_ORDER_COLUMNS, 'number', 'subject', 'resolved_time', 'department_id', 'brand_id', 'channel_id', 'user_id', 'status_id',
] as const;

/** A link list's index of each order in LINK_ORDER_COLUMNS (the assignee list's `updated_at`: 030's `ticket_assignee_list_updated`). */
export function linkListOrders({ list }: LinkList): Map<string, string> {
  const indexOf = (c: string) => (list === ASSIGNEE_LIST.list && c === 'updated_at' ? `${list}_updated` : `${list}_${listColumnOf(c)}`);
  return new Map(LINK_ORDER_COLUMNS.map((c) => [c, indexOf(c)]));
}

/** The columns both lists copy from their tickets (`customer_id`: the ticket's `user_id`). */
export const LINK_LIST_COPIED = ['status_id', 'updated_at', ...ASSIGNEE_ORDER_COLUMNS, ...ADDED.map(([c]) => c)];

const LISTS = [ASSIGNEE_LIST, TAG_LIST];

const TRIGGER_SQL = Object.assign({}, ...LISTS.map((l) => linkListTriggerSql(l, LINK_LIST_COPIED)));

export const createLinkListTriggers = (q: QueryInterface): Promise<void> => createTriggers(q, TRIGGER_SQL);

export const dropLinkListTriggers = (q: QueryInterface): Promise<void> => dropTriggers(q, TRIGGER_SQL);

/** Both lists' rows from the links and their tickets (the migration, and the benchmark after its bulk load). */
export async function fillLinkLists(q: QueryInterface): Promise<void> {
  for (const l of LISTS) await fillLinkListOf(q, l, LINK_LIST_COPIED);
}

export async function up(q: QueryInterface): Promise<void> {
  await drop031Triggers(q);
  await drop082Triggers(q);
  for (const l of LISTS) {
    await q.sequelize.query(`ALTER TABLE ${l.list}
      ${ADDED.map(([c, type]) => `ADD COLUMN ${c} ${type}`).join(',\n      ')},
      ${indexed(l).map((c) => `ADD KEY ${l.list}_${c} (${l.key}, listed, ${indexTail(c)})`).join(',\n      ')}`);
  }
  await createLinkListTriggers(q);
  // After the triggers (migrations run before the web processes start: nothing else writes now).
  await fillLinkLists(q);
}

export async function down(q: QueryInterface): Promise<void> {
  await dropLinkListTriggers(q);
  for (const l of LISTS) {
    await q.sequelize.query(`ALTER TABLE ${l.list}
      ${indexed(l).map((c) => `DROP KEY ${l.list}_${c}`).join(', ')},
      ${ADDED.map(([c]) => `DROP COLUMN ${c}`).join(', ')}`);
  }
  await create031Triggers(q);
  await create082Triggers(q);
}
