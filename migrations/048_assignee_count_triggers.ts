import type { QueryInterface } from 'sequelize';
import { createAssigneeCountTriggers, dropAssigneeCountTriggers } from './029_ticket_assignee_counts';

export const name = '048_assignee_count_triggers';

/**
 * The triggers of the operators' ticket counts again, as migration 029 now writes them: a ticket's
 * status change, trash, merge or delete updates its operators' count rows through a join from its
 * assignee rows, not an UPDATE with an `IN (SELECT ...)`, which MariaDB 10.11 ran as a scan locking
 * every row of `ticket_assignee_counts` (found by a black-box audit: unrelated ticket updates waited
 * for each other and deadlocked). The counts are the same either way: nothing to fill. Migrations
 * run before the processes start, so no write falls between the drop and the create.
 */
export async function up(q: QueryInterface): Promise<void> {
  await dropAssigneeCountTriggers(q);
  await createAssigneeCountTriggers(q);
}

/** The earlier triggers counted exactly as these do: down keeps these. */
export async function down(): Promise<void> {}
