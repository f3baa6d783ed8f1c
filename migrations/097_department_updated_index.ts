import type { QueryInterface } from 'sequelize';
import * as m025 from './025_ticket_list_assigned';
import * as m088 from './088_subject_index_holds_counted';

export const name = '097_department_updated_index';

/**
 * A department's queue by its latest activity (`department=<id>&order_column=updated_at`, the
 * view an operator of a department works from). A department's listed tickets were a range in id
 * order only (`tickets_list_department_id`), so in `updated_at` order the page walked the order's
 * index testing the department on each entry (about reach × total / count entries: a department
 * of a thousandth of the tickets passes a thousand entries per match) or, fewer, read every
 * ticket of the department and sorted them: at 1M the benchmark's small department (1,000
 * tickets) sorted its 1,000 rows for each page (4.6 ms of the page's statement, 3,004 pages read),
 * ten times that at ten million tickets.
 *
 * `tickets_list_department_updated` (deleted_at, merged_into_id, department_id, updated_at, id,
 * and the other counted columns): one department's listed tickets are a range of it in
 * `updated_at` order, the other counted filters (a status, a priority...) tested on its entries;
 * a deep page positioned by the day counters starts there at its day's edge
 * (src/ticket/tickets/listPage.ts, departmentRange).
 *
 * Write cost: one more entry per ticket, moved when its `updated_at`, department or a counted
 * column changes (as the `updated_at` list index's already is).
 *
 * This module is the current definition of the list indexes (the benchmark's bulk load uses it).
 */
export const DEPARTMENT_UPDATED_INDEX = 'tickets_list_department_updated';
const COLUMNS = ['deleted_at', 'merged_into_id', 'department_id', 'updated_at', 'id', ...m025.COUNTED.filter((c) => c !== 'department_id')];

/** The list indexes by name: 088's and this one. */
export function listIndexes(): Record<string, string[]> {
  return { ...m088.listIndexes(), [DEPARTMENT_UPDATED_INDEX]: COLUMNS };
}

export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query(`ALTER TABLE tickets ADD INDEX ${DEPARTMENT_UPDATED_INDEX} (${COLUMNS.join(', ')})`);
}

export async function down(q: QueryInterface): Promise<void> {
  await q.sequelize.query(`ALTER TABLE tickets DROP INDEX ${DEPARTMENT_UPDATED_INDEX}`);
}
