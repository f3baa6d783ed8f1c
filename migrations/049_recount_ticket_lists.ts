import type { QueryInterface } from 'sequelize';
import { fillAssigned, fillListCounts } from './025_ticket_list_assigned';
import { fillDayStatusCounts } from './027_ticket_day_status_counts';
import { fillDayFilterCounts } from './028_ticket_day_filter_counts';
import { fillAssigneeCounts } from './029_ticket_assignee_counts';
import { fillAssigneeList } from './031_ticket_assignee_orders';
import { fillUserCounts } from './035_ticket_user_counts';

export const name = '049_recount_ticket_lists';

/**
 * The ticket list's counters, flags and copies rebuilt from the tickets and their assignee rows,
 * as the benchmark fills them after its bulk load. Releases before the fixes of a person's delete
 * (a deleted customer's merged tickets given back by the foreign key, assignee rows taken by its
 * cascade: neither runs a trigger) left some wrong, and triggers only move what is there: an
 * upgraded help desk listed a ticket it did not count, so the last page never showed it (found by
 * a black-box audit of an upgrade). `tickets.assigned` first: the counts read it. Migrations run
 * before the processes start (nothing else writes meanwhile): 3.6 s for the benchmark's 100,000
 * tickets (2 cores), some 40 s at a million.
 */
export async function up(q: QueryInterface): Promise<void> {
  await fillAssigned(q);
  await fillListCounts(q);
  await fillDayStatusCounts(q);
  await fillDayFilterCounts(q);
  await fillAssigneeCounts(q);
  await fillUserCounts(q);
  await fillAssigneeList(q);
}

/** Counts as exact as those it found: nothing to undo. */
export async function down(): Promise<void> {}
