import type { QueryInterface } from 'sequelize';

export const name = '080_people_orders_by_type';

/**
 * The user and operator lists in a name or date order (`firstname`, `lastname`, `created_at`,
 * `updated_at`): every such list is of one type of person (the resource's scope), but the indexes
 * of those columns held the column alone, so a deep page walked the order's index and read each
 * skipped person's row to test the type (the benchmark's 20,000 users by `lastname` at
 * `start=10,000`: 51-54 ms one at a time, 41 requests a second under 16 connections). Indexed by
 * (type, column) instead, with the id after it: the page's ids are read from the index alone.
 * Nothing else reads people by those columns without their type.
 */
const COLUMNS = ['firstname', 'lastname', 'created_at', 'updated_at'];

export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query(`ALTER TABLE users ${COLUMNS.map((c) => `DROP INDEX users_${c}, ADD INDEX users_type_${c} (type, ${c})`).join(', ')}`);
}

export async function down(q: QueryInterface): Promise<void> {
  await q.sequelize.query(`ALTER TABLE users ${COLUMNS.map((c) => `DROP INDEX users_type_${c}, ADD INDEX users_${c} (${c})`).join(', ')}`);
}
