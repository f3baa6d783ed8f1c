import type { QueryInterface } from 'sequelize';
import { createTriggers, dropTriggers } from './triggers';
import { fillLinkListOf, linkListTriggerSql, type LinkList } from './030_ticket_assignee_list';
import { ASSIGNEE_ORDER_COLUMNS } from './031_ticket_assignee_orders';

export const name = '082_ticket_tag_list';

/**
 * One tag's tickets in the orders a team works a queue by: by `updated_at` the page sorted the
 * tag's matches (a tag of a tenth of a million tickets: 300 ms, one request at a time), and deep
 * pages in id order read a ticket row for each one skipped. Walking the order's index instead is
 * cheap only when the tag is spread over the order, which a help desk's tags need not be (a tag
 * of last year's tickets, walked from the newest, reads the year since first).
 *
 * `ticket_tag_list`: a row per tag link with a copy of what that list reads of its ticket, as
 * `ticket_assignee_list` has for an operator's (migrations 030 and 031, whose triggers keep this
 * one over `ticket_tag_links`): `listed`, `status_id` and the orders' columns (`updated_at`,
 * `due_time`, `last_reply_time`, `priority_id`, `created_at`). Each order has an index (tag_id,
 * listed, <column>, ticket_id, status_id), and the id order (tag_id, listed, ticket_id,
 * status_id): the page is a range of the tag's rows in that order, a status tested on the index's
 * entries, however deep (src/ticket/tickets/listPage.ts, LINK_LISTS). A ticket's or a tag's delete
 * takes the rows by foreign key.
 *
 * Write cost: a tag added or removed writes a row; each update of a tagged ticket that moves a
 * copied column (a reply moves `updated_at` and `last_reply_time`) rewrites a row per tag, as an
 * assigned ticket's does per operator.
 */

export const TAG_LIST: LinkList = { list: 'ticket_tag_list', links: 'ticket_tag_links', key: 'tag_id', noun: 'tag' };

/** The orders of a tag's tickets that the list holds, with their index (`ticket_tag_list_<column>`; `id`: the ticket's id). */
export const TAG_ORDER_COLUMNS = ['id', 'updated_at', ...ASSIGNEE_ORDER_COLUMNS] as const;

const COPIED = ['status_id', 'updated_at', ...ASSIGNEE_ORDER_COLUMNS];

const TRIGGER_SQL = linkListTriggerSql(TAG_LIST, COPIED);

export const createTagListTriggers = (q: QueryInterface): Promise<void> => createTriggers(q, TRIGGER_SQL);

export const dropTagListTriggers = (q: QueryInterface): Promise<void> => dropTriggers(q, TRIGGER_SQL);

/** The rows from the links and their tickets (the migration, and the benchmark after its bulk load). */
export const fillTagList = (q: QueryInterface): Promise<void> => fillLinkListOf(q, TAG_LIST, COPIED);

export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query(`CREATE TABLE ticket_tag_list (
    tag_id INT UNSIGNED NOT NULL,
    ticket_id INT UNSIGNED NOT NULL,
    listed TINYINT UNSIGNED NOT NULL,
    status_id INT UNSIGNED NOT NULL,
    updated_at INT UNSIGNED NOT NULL,
    due_time INT UNSIGNED NULL,
    last_reply_time INT UNSIGNED NULL,
    priority_id INT UNSIGNED NOT NULL,
    created_at INT UNSIGNED NOT NULL,
    PRIMARY KEY (tag_id, ticket_id),
    KEY ticket_tag_list_ticket (ticket_id),
    ${TAG_ORDER_COLUMNS.map((c) => `KEY ticket_tag_list_${c} (tag_id, listed, ${c === 'id' ? '' : `${c}, `}ticket_id, status_id),`).join('\n    ')}
    CONSTRAINT ticket_tag_list_ticket FOREIGN KEY (ticket_id) REFERENCES tickets (id) ON DELETE CASCADE,
    CONSTRAINT ticket_tag_list_tag FOREIGN KEY (tag_id) REFERENCES ticket_tags (id) ON DELETE CASCADE
  ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
  await createTagListTriggers(q);
  // After the triggers (migrations run before the web processes start: nothing else writes now).
  await fillTagList(q);
}

export async function down(q: QueryInterface): Promise<void> {
  await dropTagListTriggers(q);
  await q.dropTable('ticket_tag_list');
}
