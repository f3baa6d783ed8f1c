import { QueryTypes, type Transaction } from 'sequelize';
import { now } from '../db/entity';
import { sequelize } from '../db/sequelize';
import { BY_MERGE_TARGET } from '../db/ticketIndexes';

/** The resources of the incremental export (`GET /api/export/{resource}`). */
export const EXPORT_RESOURCES = ['tickets', 'messages', 'users', 'organisations', 'articles'] as const;
export type ExportResource = (typeof EXPORT_RESOURCES)[number];

const run = (sql: string, replacements: Record<string, unknown>, transaction: Transaction) =>
  sequelize().query(sql, { replacements, transaction, type: QueryTypes.INSERT });

/**
 * Records that records of a resource are deleted, in the transaction that deletes them: the export
 * hands their ids to readers as tombstones. Called before the delete.
 */
export async function recordDeletions(resource: ExportResource, ids: number[], transaction: Transaction): Promise<void> {
  if (!ids.length) return;
  const t = now();
  await run(
    `INSERT INTO export_tombstones (resource, record_id, deleted_at) VALUES ${ids.map((_, i) => `(:resource, :id${i}, :t)`).join(', ')}`,
    { resource, t, ...Object.fromEntries(ids.map((id, i) => [`id${i}`, id])) }, transaction,
  );
}

/**
 * What deleting a person (a user or an operator) does to exported records without a statement
 * of the application's (foreign keys do it, and they bump no `updated_at` and fire no trigger):
 * their tickets, the tickets merged into theirs, and those tickets' messages go (tombstones); messages they wrote elsewhere,
 * tickets they were assigned to or watched, organisations they owned and articles they wrote
 * change (`updated_at` moved, so the export sends them again). Called before the delete.
 */
export async function beforePersonDeleted(userId: number, isUser: boolean, transaction: Transaction): Promise<void> {
  // Each statement stamps its rows with the time it starts, not the delete's: the export holds its
  // readers back at a change it sees uncommitted (src/export/feed.ts, heldBack), which a row of a
  // later statement stamped with an earlier time escapes (the messages' tombstones of a customer
  // with 20,000 tickets take seconds before the tickets' are written).
  const stamped = (sql: string) => run(sql, { userId, t: now() }, transaction);
  const touched = (sql: string) => sequelize().query(sql, { replacements: { userId, t: now() }, transaction, type: QueryTypes.UPDATE });
  if (isUser) await stamped('INSERT INTO export_tombstones (resource, record_id, deleted_at) VALUES (\'users\', :userId, :t)');
  // The tickets that go (deleteTicketsOf): theirs, and the tickets of others merged into theirs.
  await ticketTombstones(`SELECT id FROM tickets WHERE user_id = :userId
    UNION SELECT m.id FROM tickets k STRAIGHT_JOIN tickets m ${BY_MERGE_TARGET} ON m.merged_into_id = k.id WHERE k.user_id = :userId`, stamped);
  await touched('UPDATE ticket_messages SET updated_at = :t WHERE user_id = :userId');
  // A join from the person's rows: `id IN (SELECT ...) OR id IN (SELECT ...)` scanned, and locked,
  // every ticket (MariaDB 10.11 runs no semi-join for an UPDATE), so each delete of a person held
  // up every ticket write until its commit.
  await touched(`UPDATE (SELECT ticket_id FROM ticket_assignees WHERE user_id = :userId UNION SELECT ticket_id FROM ticket_watchers WHERE user_id = :userId) l
    STRAIGHT_JOIN tickets k ON k.id = l.ticket_id SET k.updated_at = :t WHERE k.user_id <> :userId`);
  await touched('UPDATE organisations SET updated_at = :t WHERE owner_id = :userId OR id = (SELECT organisation_id FROM users WHERE id = :userId)');
  await touched('UPDATE articles SET updated_at = :t WHERE author_id = :userId');
}

/** The tombstones of the tickets `gone` selects (a SELECT of ids) and of their messages. */
async function ticketTombstones(gone: string, stamped: (sql: string) => Promise<unknown>): Promise<void> {
  await stamped(`INSERT INTO export_tombstones (resource, record_id, deleted_at)
    SELECT 'messages', m.id, :t FROM ticket_messages m JOIN (${gone}) g ON g.id = m.ticket_id`);
  await stamped(`INSERT INTO export_tombstones (resource, record_id, deleted_at)
    SELECT 'tickets', g.id, :t FROM (${gone}) g`);
}

/**
 * What deleting tickets for good (deleteTicketsForGood) does to exported records: they, the
 * tickets merged into them, and those tickets' messages go (tombstones). Called before the delete.
 */
export async function beforeTicketsDeleted(ids: number[], transaction: Transaction): Promise<void> {
  if (!ids.length) return;
  await ticketTombstones(`SELECT id FROM tickets WHERE id IN (:ids) UNION SELECT id FROM tickets ${BY_MERGE_TARGET} WHERE merged_into_id IN (:ids)`,
    (sql) => run(sql, { ids, t: now() }, transaction));
}
