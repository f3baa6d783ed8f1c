import type { QueryInterface } from 'sequelize';
import { createTriggers, dropTriggers, type TriggerSql } from './triggers';
import { COUNT_SLOTS } from './018_ticket_list_indexes';
import { RECORD_COUNT_TRIGGERS } from './056_record_counts';

export const name = '057_record_counts_scoped';

/**
 * The `count` of the ticket attachment, ticket feedback and webhook delivery lists without reading
 * every record: each grows with the tickets and their messages (a webhook's deliveries with every
 * event it is sent, never pruned), and the list COUNTed every record of it, or of its webhook, on
 * every page.
 *
 * Migration 056's `record_counts` takes them, its `brand_id` renamed `scope_id`: what narrows a
 * kind's count, the brand of people and organisations, the webhook of deliveries, the rating of
 * feedback (UNRATED before one is given), 0 for attachments (counted as a whole), so a list
 * narrowed by one brand, webhook or rating alone is a sum too. The people's and organisations'
 * triggers are written again for the new name. Kept by triggers in the statement that writes the record, and by
 * the parents whose delete cascades to them (InnoDB's cascades run no trigger): a ticket's delete
 * takes its attachments and feedback off BEFORE it (a message's delete its attachments; a ticket's
 * cascade to its messages runs no trigger, so they are not taken off twice), an event's its
 * deliveries, and a webhook's delete removes its deliveries' rows. An attachment's `ticket_id` is
 * its message's (a merge or a split moves both).
 */

const SLOT = (row: string) => `${row}.id MOD ${COUNT_SLOTS}`;

/** The scope of feedback not rated yet (a rating is 0, 1 or 2). */
const UNRATED = 255;

interface Counted {
  /** The kind of the row (an expression of it). */
  kind: (row: string) => string;
  /** The scope the row is counted in (an expression of it). */
  scope: (row: string) => string;
  /** The columns whose change moves the row between counts. */
  moves: (row: string) => string[];
}

const COUNTED: Record<string, Counted> = {
  users: { kind: (r) => `${r}.type`, scope: (r) => `IFNULL(${r}.brand_id, 0)`, moves: (r) => [`${r}.type`, `${r}.brand_id`] },
  organisations: { kind: () => "'organisation'", scope: (r) => `IFNULL(${r}.brand_id, 0)`, moves: (r) => [`${r}.brand_id`] },
  ticket_attachments: { kind: () => "'attachment'", scope: () => '0', moves: () => [] },
  // A rating is 0 to 2; none yet is 255.
  ticket_feedback: { kind: () => "'feedback'", scope: (r) => `IFNULL(${r}.rating, ${UNRATED})`, moves: (r) => [`${r}.rating`] },
  webhook_deliveries: { kind: () => "'delivery'", scope: (r) => `${r}.webhook_id`, moves: (r) => [`${r}.webhook_id`] },
};

/**
 * One more (or, `-1`, one less) record of `kind` in `scope` (expressions of a trigger's row `row`):
 * an upsert, so a removal never misses its row. (Migrations 059 and 060 count with it too.)
 */
export const countChange = (kind: string, scope: string, row: 'NEW' | 'OLD', n: 1 | -1) => `INSERT INTO record_counts (kind, scope_id, slot, n)
    VALUES (${kind}, ${scope}, ${SLOT(row)}, ${n}) ON DUPLICATE KEY UPDATE n = n ${n > 0 ? '+' : '-'} 1`;

/** The counts of the rows of `table` that `where` selects, by kind, scope (expressions of its columns) and slot. */
export const countsOf = (kind: string, scope: string, table: string, where = '1 = 1') => `INSERT INTO record_counts (kind, scope_id, slot, n)
    SELECT ${kind}, ${scope}, ${SLOT(table)}, COUNT(*) FROM ${table} WHERE ${where} GROUP BY 1, 2, 3`;

/** One more (or one less) record of the row's kind and scope. */
const change = (table: string, row: 'NEW' | 'OLD', n: 1 | -1) => countChange(COUNTED[table].kind(row), COUNTED[table].scope(row), row, n);

function triggersOf(table: string): TriggerSql {
  const moves = COUNTED[table].moves;
  const triggers: TriggerSql = {
    [`${table}_record_counts_insert`]: `AFTER INSERT ON ${table} FOR EACH ROW ${change(table, 'NEW', 1)}`,
    [`${table}_record_counts_delete`]: `AFTER DELETE ON ${table} FOR EACH ROW ${change(table, 'OLD', -1)}`,
  };
  if (moves('NEW').length) {
    const moved = `NOT (${moves('OLD').map((old, i) => `${old} <=> ${moves('NEW')[i]}`).join(' AND ')})`;
    triggers[`${table}_record_counts_update`] = `AFTER UPDATE ON ${table} FOR EACH ROW
    IF ${moved} THEN ${change(table, 'OLD', -1)}; ${change(table, 'NEW', 1)}; END IF`;
  }
  return triggers;
}

/** The rows of `table` that `where` selects (a cascade is about to delete them), taken off their counts. */
const takeOff = (table: string, where: string) => {
  const c = COUNTED[table];
  return `INSERT INTO record_counts (kind, scope_id, slot, n)
    SELECT ${c.kind(table)}, ${c.scope(table)}, ${SLOT(table)}, -COUNT(*) FROM ${table} WHERE ${where} GROUP BY 1, 2, 3
    ON DUPLICATE KEY UPDATE n = n + VALUES(n)`;
};

/** Before a delete that cascades to counted records: they leave their counts in the same statement. */
const CASCADES: TriggerSql = {
  tickets_record_counts_cascade: `BEFORE DELETE ON tickets FOR EACH ROW BEGIN
    ${takeOff('ticket_attachments', 'ticket_attachments.ticket_id = OLD.id')};
    ${takeOff('ticket_feedback', 'ticket_feedback.ticket_id = OLD.id')};
  END`,
  ticket_messages_record_counts_cascade: `BEFORE DELETE ON ticket_messages FOR EACH ROW
    ${takeOff('ticket_attachments', 'ticket_attachments.message_id = OLD.id')}`,
  events_record_counts_cascade: `BEFORE DELETE ON events FOR EACH ROW
    ${takeOff('webhook_deliveries', 'webhook_deliveries.event_id = OLD.id')}`,
  // Its deliveries go with it: their rows have nothing left to count.
  webhooks_record_counts_cascade: `AFTER DELETE ON webhooks FOR EACH ROW
    DELETE FROM record_counts WHERE kind = 'delivery' AND scope_id = OLD.id`,
};

/** This migration's triggers (066 writes some of them again). */
export const TRIGGER_SQL: TriggerSql = { ...Object.fromEntries(Object.keys(COUNTED).flatMap((t) => Object.entries(triggersOf(t)))), ...CASCADES };

/** The counts from the records themselves. */
export async function fillRecordCounts(q: QueryInterface): Promise<void> {
  await q.sequelize.query('DELETE FROM record_counts');
  for (const [table, c] of Object.entries(COUNTED)) await q.sequelize.query(countsOf(c.kind(table), c.scope(table), table));
}

export async function up(q: QueryInterface): Promise<void> {
  await dropTriggers(q, RECORD_COUNT_TRIGGERS);
  await q.sequelize.query('ALTER TABLE record_counts CHANGE brand_id scope_id INT UNSIGNED NOT NULL');
  await createTriggers(q, TRIGGER_SQL);
  // After the triggers (migrations run before the web processes start: nothing else writes now).
  await fillRecordCounts(q);
}

export async function down(q: QueryInterface): Promise<void> {
  await dropTriggers(q, TRIGGER_SQL);
  await q.sequelize.query("DELETE FROM record_counts WHERE kind IN ('attachment', 'feedback', 'delivery')");
  await q.sequelize.query('ALTER TABLE record_counts CHANGE scope_id brand_id INT UNSIGNED NOT NULL');
  await createTriggers(q, RECORD_COUNT_TRIGGERS);
}
