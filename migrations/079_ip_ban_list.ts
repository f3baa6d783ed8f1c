import type { QueryInterface } from 'sequelize';
import { createTriggers, dropTriggers, type TriggerSql } from './triggers';
import { countsOf, dimensionsOf, triggersOf, type Counted } from './066_record_counts_by_value';

export const name = '079_ip_ban_list';

/**
 * The IP ban list grows with what it stops: each burst of failed authentications from an address
 * bans it for a while (src/http/authFailures.ts), and an attack from many addresses writes
 * thousands. Its `count` read every ban (or every one of a `type`), and its `expiry`, `created_at`
 * and `updated_at` orders sorted them all: no index held those columns alone
 * (`ip_bans_type_expiry` serves the expiry job and one type's bans in expiry order).
 *
 * Counted in `record_counts` (kind `ipban`, scope 0; by `type` too, migration 066's filter rows)
 * by triggers on `ip_bans` (no delete cascades to bans), and indexed by each of those columns
 * alone, the id after it: a page is a range.
 */

const BANS: Counted = { table: 'ip_bans', kind: () => "'ipban'", scope: () => '0', by: { type: (r) => `${r}.type` } };

const TRIGGER_SQL: TriggerSql = triggersOf(BANS);

const COLUMNS = ['expiry', 'created_at', 'updated_at'];

export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query(`ALTER TABLE ip_bans ${COLUMNS.map((c) => `ADD INDEX ip_bans_${c} (${c})`).join(', ')}`);
  await createTriggers(q, TRIGGER_SQL);
  // After the triggers (migrations run before the web processes start: nothing else writes now).
  await q.sequelize.query("DELETE FROM record_counts WHERE kind = 'ipban'");
  for (const d of dimensionsOf(BANS)) await q.sequelize.query(countsOf(BANS, d, '1 = 1', 1));
}

export async function down(q: QueryInterface): Promise<void> {
  await dropTriggers(q, TRIGGER_SQL);
  await q.sequelize.query("DELETE FROM record_counts WHERE kind = 'ipban'");
  await q.sequelize.query(`ALTER TABLE ip_bans ${COLUMNS.map((c) => `DROP INDEX ip_bans_${c}`).join(', ')}`);
}
