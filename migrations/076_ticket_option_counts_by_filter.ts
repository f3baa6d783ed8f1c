import type { QueryInterface } from 'sequelize';
import { createTriggers, dropTriggers } from './triggers';
import { COUNTED } from './025_ticket_list_assigned';
import * as m072 from './072_ticket_option_counts';

export const name = '076_ticket_option_counts_by_filter';

/**
 * One option of a ticket field beside another counted filter of the list (`customfield` and
 * `department`, `priority`, `brand`, `channel`, `internal`, `locked` or `assigned=-1`): migration
 * 072 counted an option per status only, so such a list counted its matches (an option of half
 * the tickets and a department: 500,000 index entries and as many tickets read at 1M).
 *
 * `ticket_option_counts` now keeps every column the list's own counters keep (migration 025's
 * COUNTED: status, priority, department, brand, channel, internal, locked, assigned), as
 * `ticket_list_counts` does for the tickets alone: a list of an option and any of those filters
 * sums the option's rows that match them. 072's triggers are the same with the wider columns; a
 * ticket's change of any of them moves its options' counts (the `assigned` flag's too: 025's
 * triggers write it on the ticket, whose update then fires here).
 *
 * An option alone sums its rows over every combination its tickets hold (a few thousand at most
 * where the list's counters hold as many: one index range).
 */

export const WIDE = COUNTED;

export async function up(q: QueryInterface): Promise<void> {
  await dropTriggers(q, m072.triggerSql(['status_id']));
  await q.dropTable('ticket_option_counts');
  await q.sequelize.query(m072.tableSql(WIDE));
  await createTriggers(q, m072.triggerSql(WIDE));
  // After the triggers (migrations run before the web processes start: nothing else writes now).
  await q.sequelize.query(m072.fillSql(WIDE));
}

export async function down(q: QueryInterface): Promise<void> {
  await dropTriggers(q, m072.triggerSql(WIDE));
  await q.dropTable('ticket_option_counts');
  await q.sequelize.query(m072.tableSql(['status_id']));
  await createTriggers(q, m072.triggerSql(['status_id']));
  await q.sequelize.query(m072.fillSql(['status_id']));
}
