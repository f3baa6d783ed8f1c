import type { QueryInterface } from 'sequelize';

export const name = '037_ticket_priority_names';

/**
 * Ticket priority names are unique as status and tag names are (as the column's collation compares
 * them), so a picker never shows two of one name. Names that are already duplicated keep their
 * first row's name; the others get their id appended first.
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query(`UPDATE ticket_priorities p
    JOIN (SELECT MIN(id) AS keep, name FROM ticket_priorities GROUP BY name HAVING COUNT(*) > 1) d ON p.name = d.name AND p.id <> d.keep
    SET p.name = LEFT(CONCAT(p.name, ' (', p.id, ')'), 255)`);
  await q.addIndex('ticket_priorities', ['name'], { unique: true, name: 'ticket_priorities_name_unique' });
}

export async function down(q: QueryInterface): Promise<void> {
  await q.removeIndex('ticket_priorities', 'ticket_priorities_name_unique');
}
