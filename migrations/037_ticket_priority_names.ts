import type { QueryInterface } from 'sequelize';
import { uniqueNames } from './columns';

export const name = '037_ticket_priority_names';

/**
 * Ticket priority names are unique as status and tag names are (as the column's collation compares
 * them), so a picker never shows two of one name. Names that are already duplicated keep their
 * first row's name; the others get their id appended first.
 */
export async function up(q: QueryInterface): Promise<void> {
  await uniqueNames(q, 'ticket_priorities', 'ticket_priorities_name_unique');
}

export async function down(q: QueryInterface): Promise<void> {
  await q.removeIndex('ticket_priorities', 'ticket_priorities_name_unique');
}
