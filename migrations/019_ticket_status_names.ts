import type { QueryInterface } from 'sequelize';
import { uniqueNames } from './columns';

export const name = '019_ticket_status_names';

/**
 * Ticket status names are unique (as the column's collation compares them: case- and
 * accent-insensitively), so parallel creates of one name make one row. Names that are already
 * duplicated keep their first row's name; the others get their id appended first.
 */
export async function up(q: QueryInterface): Promise<void> {
  await uniqueNames(q, 'ticket_statuses', 'ticket_statuses_name_unique');
}

export async function down(q: QueryInterface): Promise<void> {
  await q.removeIndex('ticket_statuses', 'ticket_statuses_name_unique');
}
