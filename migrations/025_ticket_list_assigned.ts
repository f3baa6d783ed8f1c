import type { QueryInterface } from 'sequelize';
import { createTriggers, dropTriggers, type TriggerSql } from './triggers';
import * as m018 from './018_ticket_list_indexes';

export const name = '025_ticket_list_assigned';

/**
 * `assigned=-1` (tickets no operator is assigned to) becomes a counted filter of the ticket list
 * (docs/performance.md): its count was a COUNT over every listed ticket with a probe of
 * `ticket_assignees` each (209 ms at a million tickets).
 *
 * - `tickets.assigned`: 1 when the ticket has at least one assignee. Kept by triggers on
 *   `ticket_assignees` in the statement that writes an assignee row (insert: 1; delete: whether
 *   another row is left; an update of `ticket_id`: both tickets). Foreign-key cascades run no
 *   trigger in MariaDB: a ticket's delete takes its rows with it (nothing left to keep), and a
 *   person's delete removes their assignee rows with a statement first (src/user/users/service.ts).
 * - The counters of migration 018 (`ticket_list_counts`) gain `assigned` as one more column (and
 *   key part): the tickets' counting triggers are those of 018 with the longer column list, so a
 *   change of the flag moves a ticket from one counter row to another like a change of status.
 * - The wide list indexes (`tickets_list_id`, `_created_at`, `_updated_at`, `_last_reply_time`,
 *   `_due_time`) hold `assigned` too: a page of unassigned tickets walks the order's index and
 *   tests the flag on its entries (index condition pushdown). `tickets_filter_assigned` reads a
 *   rare value's tickets (few unassigned among many) in id order.
 *
 * This module is the current definition of the counted columns, the list indexes and the counting
 * triggers (the list's code and the benchmark's bulk load use it); 018's stay as they were.
 */

/** Columns the counted filters of the list test: in the counters and in the wide list indexes. */
export const COUNTED = [...m018.COUNTED, 'assigned'] as const;
const WIDE_EXTRA = [...COUNTED, 'user_id'];
export const WIDE_SORTS = m018.WIDE_SORTS;
export const COUNT_SLOTS = m018.COUNT_SLOTS;
const FILTER_COLUMNS = [...m018.FILTER_COLUMNS, 'assigned'] as const;

/** The list indexes by name: their columns (018's, with `assigned` in the wide ones and its filter index). */
export function listIndexes(): Record<string, string[]> {
  const out = m018.listIndexes();
  for (const s of WIDE_SORTS) out[`tickets_list_${s}`] = ['deleted_at', 'merged_into_id', ...(s === 'id' ? [] : [s]), 'id', ...WIDE_EXTRA];
  for (const c of FILTER_COLUMNS) out[`tickets_filter_${c}`] = [c, 'deleted_at', 'merged_into_id'];
  return out;
}
const WIDE = WIDE_SORTS.map((s) => `tickets_list_${s}`);

/** A ticket's flag after an assignee row of it went: whether another is left. */
const recheck = (ticket: string) => `UPDATE tickets SET assigned = 0 WHERE id = ${ticket} AND assigned = 1
  AND NOT EXISTS (SELECT 1 FROM ticket_assignees WHERE ticket_id = ${ticket})`;
const flag = (ticket: string) => `UPDATE tickets SET assigned = 1 WHERE id = ${ticket} AND assigned = 0`;

const TRIGGER_SQL: TriggerSql = {
  ...m018.listCountTriggerSql(COUNTED),
  // The flag's own writes (`AND assigned = 0/1`) happen only when it changes; the update of the
  // ticket then moves its counter (the trigger above).
  ticket_assignees_assigned_insert: `AFTER INSERT ON ticket_assignees FOR EACH ROW ${flag('NEW.ticket_id')}`,
  ticket_assignees_assigned_delete: `AFTER DELETE ON ticket_assignees FOR EACH ROW ${recheck('OLD.ticket_id')}`,
  ticket_assignees_assigned_update: `AFTER UPDATE ON ticket_assignees FOR EACH ROW
    IF NEW.ticket_id <> OLD.ticket_id THEN ${recheck('OLD.ticket_id')}; ${flag('NEW.ticket_id')}; END IF`,
};

/**
 * The triggers that keep the counts and the `assigned` flags (the benchmark drops them for its
 * bulk load, then fills both: fillAssigned, fillListCounts).
 */
export const createListCountTriggers = (q: QueryInterface): Promise<void> => createTriggers(q, TRIGGER_SQL);

export const dropListCountTriggers = (q: QueryInterface): Promise<void> => dropTriggers(q, TRIGGER_SQL);

/** Every ticket's `assigned` from its assignee rows (with the triggers dropped: no counter moves). */
export async function fillAssigned(q: QueryInterface): Promise<void> {
  await q.sequelize.query(`UPDATE tickets t LEFT JOIN (SELECT DISTINCT ticket_id FROM ticket_assignees) a ON a.ticket_id = t.id
    SET t.assigned = a.ticket_id IS NOT NULL WHERE t.assigned <> (a.ticket_id IS NOT NULL)`);
}

/** The counts from the tickets themselves (the migration, and the benchmark after its bulk load). */
export const fillListCounts = (q: QueryInterface) => m018.fillCountsOf(q, COUNTED);

/** The wide indexes with the given columns (one ALTER: each dropped and added again, in place). */
async function rebuildWide(q: QueryInterface, indexes: Record<string, string[]>, extra: string[] = []): Promise<void> {
  const parts = WIDE.flatMap((n) => [`DROP INDEX ${n}`, `ADD INDEX ${n} (${indexes[n].join(', ')})`]);
  await q.sequelize.query(`ALTER TABLE tickets ${[...parts, ...extra].join(', ')}`);
}

export async function up(q: QueryInterface): Promise<void> {
  const sql = (s: string) => q.sequelize.query(s);
  // Migrations run before the web processes start: nothing else writes meanwhile.
  await m018.dropListCountTriggers(q);
  // Instant (metadata only); the flags are set before the indexes that hold them are built.
  await sql('ALTER TABLE tickets ADD COLUMN assigned TINYINT UNSIGNED NOT NULL DEFAULT 0');
  await fillAssigned(q);
  const indexes = listIndexes();
  await rebuildWide(q, indexes, ['ADD INDEX tickets_filter_assigned (assigned, deleted_at, merged_into_id)']);
  await sql(`ALTER TABLE ticket_list_counts ADD COLUMN assigned TINYINT UNSIGNED NOT NULL DEFAULT 0 AFTER locked,
    DROP PRIMARY KEY, ADD PRIMARY KEY (state, ${COUNTED.join(', ')}, slot)`);
  await createListCountTriggers(q);
  await fillListCounts(q);
}

export async function down(q: QueryInterface): Promise<void> {
  const sql = (s: string) => q.sequelize.query(s);
  await dropListCountTriggers(q);
  await sql('DELETE FROM ticket_list_counts');
  await sql(`ALTER TABLE ticket_list_counts DROP PRIMARY KEY, DROP COLUMN assigned, ADD PRIMARY KEY (state, ${m018.COUNTED.join(', ')}, slot)`);
  await rebuildWide(q, m018.listIndexes(), ['DROP INDEX tickets_filter_assigned']);
  await sql('ALTER TABLE tickets DROP COLUMN assigned');
  await m018.createListCountTriggers(q);
  await m018.fillListCounts(q);
}
