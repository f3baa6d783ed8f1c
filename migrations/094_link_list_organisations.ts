import type { QueryInterface } from 'sequelize';
import { ASSIGNEE_LIST, fillLinkListOf, linkListTriggerSql } from './030_ticket_assignee_list';
import { TAG_LIST } from './082_ticket_tag_list';
import { LINK_LIST_COPIED } from './083_link_list_orders';
import { LIST_STATE, createLinkListTriggers as create084Triggers, dropLinkListTriggers as drop084Triggers } from './084_link_list_trash';
import { createTriggers, dropTriggers } from './triggers';

export const name = '094_link_list_organisations';

/**
 * One operator's or one tag's tickets of an organisation (`assigned` or `tag` beside
 * `organisation`: a company's tickets one agent holds, or tagged `billing`) COUNTed the
 * organisation's entries of its index, each looked up among the operator's or tag's links, and
 * the page walked them so (at 1M, the large organisation's 63,049 tickets with a tag of a tenth:
 * 155 ms a request for 150 matches). A customer's had the same cost; the link lists copy the
 * customer (`customer_id`, migration 083), indexed after the list's key, so theirs is a range.
 *
 * Both link lists copy the ticket's `organisation_id` too (its customer's organisation, migration
 * 086), with an index (key, listed, organisation_id, ticket_id, status_id): an operator's or a
 * tag's tickets of some organisations are a range of it (src/ticket/tickets/listPage.ts, linkOfPeople).
 * The link lists' triggers (084's, same names) copy it with the other columns; a customer's change
 * of organisation rewrites their tickets' `organisation_id` (086's trigger), and so their rows.
 *
 * Write cost: a link's row carries one more column and index entry; a ticket's change of
 * organisation rewrites its rows of both lists.
 */

/** The columns both lists copy from their tickets since this migration. */
export const LINK_LIST_COPIED_ORGANISATION = [...LINK_LIST_COPIED, 'organisation_id'];

const LISTS = [ASSIGNEE_LIST, TAG_LIST];

const TRIGGER_SQL = Object.assign({}, ...LISTS.map((l) => linkListTriggerSql(l, LINK_LIST_COPIED_ORGANISATION, LIST_STATE)));

export const createLinkListTriggers = (q: QueryInterface): Promise<void> => createTriggers(q, TRIGGER_SQL);

export const dropLinkListTriggers = (q: QueryInterface): Promise<void> => dropTriggers(q, TRIGGER_SQL);

/** Both lists' rows from the links and their tickets (recounts, and the benchmark after its bulk load). */
export async function fillLinkLists(q: QueryInterface): Promise<void> {
  for (const l of LISTS) await fillLinkListOf(q, l, LINK_LIST_COPIED_ORGANISATION, LIST_STATE);
}

export async function up(q: QueryInterface): Promise<void> {
  await drop084Triggers(q);
  for (const { list, key } of LISTS) {
    await q.sequelize.query(`ALTER TABLE ${list} ADD COLUMN organisation_id INT UNSIGNED NULL,
      ADD KEY ${list}_organisation_id (${key}, listed, organisation_id, ticket_id, status_id)`);
  }
  await createLinkListTriggers(q);
  // After the triggers (migrations run before the web processes start: nothing else writes now).
  for (const { list } of LISTS) {
    await q.sequelize.query(`UPDATE ${list} l JOIN tickets t ON t.id = l.ticket_id SET l.organisation_id = t.organisation_id WHERE t.organisation_id IS NOT NULL`);
  }
}

export async function down(q: QueryInterface): Promise<void> {
  await dropLinkListTriggers(q);
  for (const { list } of LISTS) await q.sequelize.query(`ALTER TABLE ${list} DROP KEY ${list}_organisation_id, DROP COLUMN organisation_id`);
  await create084Triggers(q);
}
