import type { QueryInterface } from 'sequelize';

export const name = '019_ticket_status_names';

/**
 * Ticket status names are unique (as the column's collation compares them: case- and
 * accent-insensitively), so parallel creates of one name make one row. Names that are already
 * duplicated keep their first row's name; the others get their id appended first.
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query(`UPDATE ticket_statuses s
    JOIN (SELECT MIN(id) AS keep, name FROM ticket_statuses GROUP BY name HAVING COUNT(*) > 1) d ON s.name = d.name AND s.id <> d.keep
    SET s.name = LEFT(CONCAT(s.name, ' (', s.id, ')'), 255)`);
  await q.addIndex('ticket_statuses', ['name'], { unique: true, name: 'ticket_statuses_name_unique' });
}

export async function down(q: QueryInterface): Promise<void> {
  await q.removeIndex('ticket_statuses', 'ticket_statuses_name_unique');
}
