import { QueryTypes, type QueryInterface } from 'sequelize';

export const name = '099_foreign_keys_update_restrict';

/**
 * No foreign key to a primary key cascades an update of it: every such `ON UPDATE CASCADE` (the
 * one the migrations' `fk()` wrote, and a few written out) becomes the default, RESTRICT. No
 * primary key of the help desk is ever changed (ids), so nothing cascaded; but for each `UPDATE`
 * of a parent, MariaDB opens every table whose key cascades an update from it, ready for the
 * cascade, with the update triggers of that table (InnoDB's cascades fire none), and every table
 * those triggers use. An `UPDATE` of a ticket so opened `ticket_tag_links` and `ticket_assignees`
 * with their triggers, which read `tickets` again: seven instances of `tickets`, each holding its
 * 26 triggers parsed (15.8 MB), 114 MB of the server's memory for each ticket write running at
 * once, kept by the table cache (docs/operations.md, MariaDB's memory), and the opening and
 * locking of them on every such statement. With this migration 65 MB; with migration 100 too
 * (`ticket_assignees` named in an UPDATE of a trigger), one instance, 18.8 MB.
 * Deletes still cascade (`ON DELETE` unchanged), and so do the updates of the keys to other
 * unique keys, which do change (an organisation's domains follow its brand: `(id, brand_id)`) or
 * belong to a table without triggers (an upload's hash).
 *
 * Each table's keys are dropped, then added again under the same names, in place (ALGORITHM=
 * INPLACE: refused rather than a copy of the table) and without checking the rows
 * (`foreign_key_checks = 0` for the statement; they are the rows the keys held): no table is
 * copied, whatever its size. Every index keeps its name (recreate).
 */

/** The keys that did not cascade updates before this migration (`down` leaves them so). */
const NEVER_CASCADED = [
  'ticket_tag_list_tag', 'ticket_tag_list_ticket', 'ticket_message_merges_message', 'ticket_assignee_list_ticket',
  'ticket_assignee_list_user', 'tickets_organisation_fk', 'users_ibfk_1',
];

interface ForeignKey { table: string; name: string; columnNames: string; columns: string; parent: string; parentColumns: string; onDelete: string }

async function foreignKeys(q: QueryInterface, where: string, replacements: Record<string, unknown> = {}): Promise<ForeignKey[]> {
  return q.sequelize.query<ForeignKey>(`SELECT r.TABLE_NAME AS \`table\`, r.CONSTRAINT_NAME AS name, r.REFERENCED_TABLE_NAME AS parent, r.DELETE_RULE AS onDelete,
      GROUP_CONCAT(k.COLUMN_NAME ORDER BY k.ORDINAL_POSITION) AS columnNames,
      GROUP_CONCAT(CONCAT('\`', k.COLUMN_NAME, '\`') ORDER BY k.ORDINAL_POSITION) AS columns,
      GROUP_CONCAT(CONCAT('\`', k.REFERENCED_COLUMN_NAME, '\`') ORDER BY k.ORDINAL_POSITION) AS parentColumns
    FROM information_schema.REFERENTIAL_CONSTRAINTS r JOIN information_schema.KEY_COLUMN_USAGE k
      ON k.CONSTRAINT_SCHEMA = r.CONSTRAINT_SCHEMA AND k.TABLE_NAME = r.TABLE_NAME AND k.CONSTRAINT_NAME = r.CONSTRAINT_NAME
    WHERE r.CONSTRAINT_SCHEMA = DATABASE() AND ${where}
    GROUP BY r.TABLE_NAME, r.CONSTRAINT_NAME, r.REFERENCED_TABLE_NAME, r.DELETE_RULE
    ORDER BY r.TABLE_NAME, r.CONSTRAINT_NAME`, { replacements, type: QueryTypes.SELECT });
}

/**
 * Each table's keys `keys` again, with `onUpdate` (`''`: the default, RESTRICT). An index MariaDB
 * made for a key (named after its first column) is one it drops when a key is added again, for
 * an index of its own named after the key: the indexes that serve the keys are renamed away and
 * back first, which makes them the table's own, so that the keys added again use them and every
 * index keeps its name.
 */
async function recreate(q: QueryInterface, keys: ForeignKey[], onUpdate: '' | 'CASCADE'): Promise<void> {
  const indexes = await q.sequelize.query<{ table: string; name: string; columnNames: string }>(
    `SELECT TABLE_NAME AS \`table\`, INDEX_NAME AS name, GROUP_CONCAT(COLUMN_NAME ORDER BY SEQ_IN_INDEX) AS columnNames
      FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND INDEX_NAME <> 'PRIMARY' GROUP BY TABLE_NAME, INDEX_NAME`,
    { type: QueryTypes.SELECT },
  );
  const byTable = new Map<string, ForeignKey[]>();
  for (const k of keys) byTable.set(k.table, [...(byTable.get(k.table) ?? []), k]);
  const rule = (action: string, r: string) => (r === 'RESTRICT' || r === '' ? '' : ` ON ${action} ${r}`);
  const sql = (statement: string) => q.sequelize.query(`${statement}, ALGORITHM=INPLACE`);
  for (const [table, own] of byTable) {
    const serving = [...new Set(indexes.filter((i) => i.table === table
      && own.some((k) => `${i.columnNames},`.startsWith(`${k.columnNames},`))).map((i) => i.name))];
    const away = (i: number) => `\`fk_index_099_${i}\``;
    await sql(`ALTER TABLE \`${table}\` ${[...own.map((k) => `DROP FOREIGN KEY \`${k.name}\``), ...serving.map((n, i) => `RENAME INDEX \`${n}\` TO ${away(i)}`)].join(', ')}`);
    if (serving.length) await sql(`ALTER TABLE \`${table}\` ${serving.map((n, i) => `RENAME INDEX ${away(i)} TO \`${n}\``).join(', ')}`);
    await sql(`SET STATEMENT foreign_key_checks = 0 FOR ALTER TABLE \`${table}\` ${own.map((k) => `ADD CONSTRAINT \`${k.name}\`
      FOREIGN KEY (${k.columns}) REFERENCES \`${k.parent}\` (${k.parentColumns})${rule('DELETE', k.onDelete)}${rule('UPDATE', onUpdate)}`).join(', ')}`);
  }
}

export async function up(q: QueryInterface): Promise<void> {
  await recreate(q, await foreignKeys(q, "r.UPDATE_RULE = 'CASCADE' AND r.UNIQUE_CONSTRAINT_NAME = 'PRIMARY'"), '');
}

export async function down(q: QueryInterface): Promise<void> {
  await recreate(q, await foreignKeys(q, "r.UPDATE_RULE <> 'CASCADE' AND r.CONSTRAINT_NAME NOT IN (:never)", { never: NEVER_CASCADED }), 'CASCADE');
}
