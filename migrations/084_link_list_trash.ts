import type { QueryInterface } from 'sequelize';
import { ASSIGNEE_LIST, fillLinkListOf, linkListTriggerSql, type ListedOf } from './030_ticket_assignee_list';
import { TAG_LIST } from './082_ticket_tag_list';
import { LINK_LIST_COPIED, createLinkListTriggers as create083Triggers, dropLinkListTriggers as drop083Triggers } from './083_link_list_orders';
import { createTriggers, dropTriggers } from './triggers';

export const name = '084_link_list_trash';

/**
 * One operator's or one tag's tickets in the trash. The link lists (migrations 030, 082 and 083)
 * kept `listed` 1 for a ticket neither trashed nor merged and 0 otherwise, so the trash (trashed,
 * not merged) was no range of them: its page read all of the operator's or tag's trashed and
 * merged tickets' rows and sorted them.
 *
 * `listed` becomes the ticket's state in the list: 1 listed, 2 trashed (not merged), 0 merged.
 * Every index of the lists is (key, listed, <column>, ticket_id, ...), so the trash is a range of
 * them in every order they hold, as the listed tickets are (src/ticket/tickets/listPage.ts); the
 * queries of listed tickets (`listed = 1`) read the same rows as before. The triggers of 083 are
 * replaced by the same triggers writing the new value (same names); the rows of trashed tickets
 * are set to 2.
 *
 * Write cost: none added (the same rows and entries are written, with another value).
 */

/** A ticket's state in a link list: 1 listed, 2 trashed (not merged), 0 merged. */
export const LIST_STATE: ListedOf = (t) => `IF(${t}.merged_into_id IS NOT NULL, 0, IF(${t}.deleted_at IS NULL, 1, 2))`;

/** `listed` of the trash's tickets in the link lists. */
export const TRASHED = 2;

const LISTS = [ASSIGNEE_LIST, TAG_LIST];

const TRIGGER_SQL = Object.assign({}, ...LISTS.map((l) => linkListTriggerSql(l, LINK_LIST_COPIED, LIST_STATE)));

export const createLinkListTriggers = (q: QueryInterface): Promise<void> => createTriggers(q, TRIGGER_SQL);

export const dropLinkListTriggers = (q: QueryInterface): Promise<void> => dropTriggers(q, TRIGGER_SQL);

/** Both lists' rows from the links and their tickets (recounts, and the benchmark after its bulk load). */
export async function fillLinkLists(q: QueryInterface): Promise<void> {
  for (const l of LISTS) await fillLinkListOf(q, l, LINK_LIST_COPIED, LIST_STATE);
}

export async function up(q: QueryInterface): Promise<void> {
  await drop083Triggers(q);
  await createLinkListTriggers(q);
  // After the triggers (migrations run before the web processes start: nothing else writes now).
  for (const { list } of LISTS) {
    await q.sequelize.query(`UPDATE ${list} l JOIN tickets t ON t.id = l.ticket_id SET l.listed = ${LIST_STATE('t')} WHERE l.listed = 0`);
  }
}

export async function down(q: QueryInterface): Promise<void> {
  await dropLinkListTriggers(q);
  for (const { list } of LISTS) await q.sequelize.query(`UPDATE ${list} SET listed = 0 WHERE listed = ${TRASHED}`);
  await create083Triggers(q);
}
