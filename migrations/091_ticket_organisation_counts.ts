import type { QueryInterface } from 'sequelize';
import { createTriggers, dropTriggers, type TriggerSql } from './triggers';
import { fillCountsOf, listCountTriggerSql, type TicketCounts } from './018_ticket_list_indexes';
import { COUNTED } from './025_ticket_list_assigned';
import { linkedTableSql } from './072_ticket_option_counts';

export const name = '091_ticket_organisation_counts';

/**
 * An organisation's tickets beside another filter (`organisation` and `priority`, `department`,
 * `brand`, `channel`, `internal`, `locked` or `assigned=-1`: a company's urgent tickets, its
 * tickets in one team's department) COUNTed the organisation's entries of migration 086's index,
 * every one of them (the benchmark's large organisation at 1M, 63,049 tickets: 17.7-18.3 ms a
 * request, growing with the organisation). Its members' counters (migration 035) hold a status
 * only.
 *
 * `ticket_organisation_counts`: per organisation, state (listed, trashed), the columns the list's
 * own counters keep (migration 025's COUNTED) and slot (ticket id MOD 8), the number of tickets
 * whose `organisation_id` (086: their customer's organisation) it is, merged ones not counted. A
 * list of organisations and any of those filters sums their rows that match them
 * (src/ticket/tickets/listPage.ts). Kept by migration 018's triggers keyed by the column: a
 * ticket's create, a change of its organisation (its customer's change, or the customer's own
 * change of organisation, which 086's trigger writes on each of their tickets), of state, merge
 * or a counted column moves it from the old row to the new; a delete takes it away. An
 * organisation's delete first takes its members out (src/user/organisation.ts, whose tickets then
 * leave its rows) and then its rows go (the foreign key's cascade to tickets runs no trigger).
 *
 * Write cost: one row per create of a ticket whose customer has an organisation, two per change of
 * those columns; a customer who joins or leaves one moves each of their tickets' rows.
 */

export const ORGANISATION_COUNTS: TicketCounts = { table: 'ticket_organisation_counts', key: 'organisation_id' };

const TRIGGER_SQL: TriggerSql = {
  ...listCountTriggerSql(COUNTED, ORGANISATION_COUNTS),
  organisations_ticket_counts_delete: 'AFTER DELETE ON organisations FOR EACH ROW DELETE FROM ticket_organisation_counts WHERE organisation_id = OLD.id',
};

/** The triggers that keep the counts (the benchmark drops them for its bulk load, then fills the counts). */
export const createOrganisationCountTriggers = (q: QueryInterface): Promise<void> => createTriggers(q, TRIGGER_SQL);

export const dropOrganisationCountTriggers = (q: QueryInterface): Promise<void> => dropTriggers(q, TRIGGER_SQL);

/** The counts from the tickets themselves (after the triggers: nothing else writes while migrations run). */
export const fillOrganisationCounts = (q: QueryInterface): Promise<void> => fillCountsOf(q, COUNTED, ORGANISATION_COUNTS);

export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query(linkedTableSql({ table: ORGANISATION_COUNTS.table, keys: [['organisation_id', 'INT UNSIGNED']] }, COUNTED));
  await createOrganisationCountTriggers(q);
  await fillOrganisationCounts(q);
}

export async function down(q: QueryInterface): Promise<void> {
  await dropOrganisationCountTriggers(q);
  await q.dropTable(ORGANISATION_COUNTS.table);
}
