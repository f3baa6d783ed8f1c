import type { QueryInterface } from 'sequelize';
import { createAssigneeCountTriggers, dropAssigneeCountTriggers } from './029_ticket_assignee_counts';

export const name = '100_assignee_counts_derived_join';

/**
 * The triggers of the operators' ticket counts again, as migration 029 now writes them: a ticket's
 * status change, trash, merge or delete reads its assignee rows in a derived table of the UPDATE
 * of their counts, no longer as a table of that UPDATE. Named there, `ticket_assignees` was a
 * table the statement might update, so MariaDB opened it for every UPDATE of a ticket with its own
 * update triggers, and those read `tickets`: with the cascades migration 099 took away, an UPDATE
 * of a ticket held seven instances of `tickets`, each with its 26 triggers parsed (114 MB; 65 MB
 * after 099 alone, 18.8 MB after both: docs/operations.md, MariaDB's memory). The same plan (the
 * ticket's assignee rows, then each count row by its primary key) and the same counts: nothing to
 * fill. Migrations run before the processes start, so no write falls between the drop and the
 * create.
 */
export async function up(q: QueryInterface): Promise<void> {
  await dropAssigneeCountTriggers(q);
  await createAssigneeCountTriggers(q);
}

/** The earlier triggers counted exactly as these do: down keeps these. */
export async function down(): Promise<void> {}
