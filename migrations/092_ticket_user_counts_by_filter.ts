import type { QueryInterface } from 'sequelize';
import { createTriggers, dropTriggers, type TriggerSql } from './triggers';
import { fillCountsOf, listCountTriggerSql, type TicketCounts } from './018_ticket_list_indexes';
import { COUNTED } from './025_ticket_list_assigned';
import { personCountsTable } from './029_ticket_assignee_counts';
import * as m035 from './035_ticket_user_counts';
import { linkedTableSql } from './072_ticket_option_counts';

export const name = '092_ticket_user_counts_by_filter';

/**
 * A customer's tickets beside another filter than a status (`user` or `user_email` and a
 * priority, a department, the unassigned...: a customer's urgent tickets) COUNTed the customer's
 * entries of `tickets_filter_user_id` (the benchmark's busy customer at 1M, 62,549 tickets: 21.6
 * ms a request with a priority, 27.2 by address), as an organisation's did before migration 091.
 *
 * `ticket_user_counts` (migration 035: per customer, state, status and slot) keeps every column
 * the list's own counters keep (migration 025's COUNTED), as migration 076 widened an option's: a
 * list of customers and any of those filters sums their rows that match them
 * (src/ticket/tickets/listPage.ts). The triggers are migration 018's keyed by the customer (the
 * same names as 035's); a change of one of the wider columns now moves the ticket between two rows
 * too. A create still writes one row; a customer's rows are at most one per ticket, and no more
 * than the combinations of their tickets' values (the busy customer's 62,549 tickets at 1M:
 * 234 rows, against 32 before; a status's sum reads a part of them).
 */

export const USER_COUNTS: TicketCounts = { table: 'ticket_user_counts', key: 'user_id' };

const TRIGGER_SQL: TriggerSql = listCountTriggerSql(COUNTED, USER_COUNTS);

/** The triggers that keep the counts (the benchmark drops them for its bulk load, then fills the counts). */
export const createUserCountTriggers = (q: QueryInterface): Promise<void> => createTriggers(q, TRIGGER_SQL);

export const dropUserCountTriggers = (q: QueryInterface): Promise<void> => dropTriggers(q, TRIGGER_SQL);

/** The counts from the tickets themselves (after the triggers: nothing else writes while migrations run). */
export const fillUserCounts = (q: QueryInterface): Promise<void> => fillCountsOf(q, COUNTED, USER_COUNTS);

export async function up(q: QueryInterface): Promise<void> {
  await m035.dropUserCountTriggers(q);
  await q.dropTable(USER_COUNTS.table);
  await q.sequelize.query(linkedTableSql({ table: USER_COUNTS.table, keys: [['user_id', 'INT UNSIGNED']] }, COUNTED));
  await createUserCountTriggers(q);
  await fillUserCounts(q);
}

export async function down(q: QueryInterface): Promise<void> {
  await dropUserCountTriggers(q);
  await q.dropTable(USER_COUNTS.table);
  await q.sequelize.query(personCountsTable(USER_COUNTS.table));
  await m035.createUserCountTriggers(q);
  await m035.fillUserCounts(q);
}
