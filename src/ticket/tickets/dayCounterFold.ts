import { Transaction } from 'sequelize';
import { DAY } from '../../../migrations/026_ticket_day_counts';
import { now } from '../../db/entity';
import { errnoOf } from '../../db/errors';
import { execute, select } from '../../db/select';
import { sequelize } from '../../db/sequelize';
import { housekeeping } from '../../scheduler/task';

/** A day counters' table: the key's columns before `day`, those between `day` and `slot`, and whether its rows keep id bounds. */
interface DayCounterTable { table: string; prefix: readonly string[]; rest: readonly string[]; bounds: boolean }

const TABLES: readonly DayCounterTable[] = [
  { table: 'ticket_day_counts', prefix: ['col', 'state'], rest: ['status_id'], bounds: true },
  { table: 'ticket_day_filter_counts', prefix: ['col', 'state', 'dim', 'val'], rest: [], bounds: false },
];

/** Days folded in one transaction: a range of the key, at most 32 days' rows locked at once. */
const SPAN = 32;

/** MariaDB's answer to a `NOWAIT` read that meets a row another transaction holds. */
const ER_LOCK_WAIT_TIMEOUT = 1205;

type Row = Record<string, number>;

/**
 * Folds the day counters of the days before today (UTC) into one row per day and status (or
 * filter value): migration 051. Returns how many rows it removed.
 *
 * A day's rows are summed into its row of the lowest slot (the id bounds widened to all of them);
 * a day whose rows sum to 0 counts no ticket and loses them all. Each span of days is one
 * transaction at READ COMMITTED that locks its rows with `NOWAIT` (its key's range, never a scan
 * of the table) and then writes only those, each by its primary key: the
 * fold never waits on a ticket's write (nor can a ticket's transaction wait on it and then be
 * chosen as a deadlock's victim); a span whose rows a write holds is left to the next run.
 */
export async function foldDayCounters(at = now()): Promise<number> {
  const today = Math.floor(at / DAY);
  let removed = 0;
  for (const counters of TABLES) {
    const { table, prefix, rest } = counters;
    const group = [...prefix, 'day', ...rest].join(', ');
    // The spans that hold a day with rows to fold (the table's own rows: no ticket is read).
    const spans = await select<Row>(
      `SELECT DISTINCT ${prefix.join(', ')}, day DIV ${SPAN} AS span FROM (
         SELECT ${group} FROM ${table} WHERE day < :today GROUP BY ${group} HAVING COUNT(*) > 1 OR SUM(n) = 0) g`,
      { today },
    );
    for (const span of spans) removed += await foldSpan(counters, span, today);
  }
  return removed;
}

/** One span's fold (foldDayCounters): the rows it removed, 0 when a write holds one of them. */
async function foldSpan({ table, prefix, rest, bounds }: DayCounterTable, span: Row, today: number): Promise<number> {
  const key = [...prefix, 'day', ...rest, 'slot'];
  const values: Record<string, unknown> = {
    from: span.span * SPAN, to: Math.min((span.span + 1) * SPAN, today) - 1, ...Object.fromEntries(prefix.map((c) => [c, span[c]])),
  };
  const inSpan = `${prefix.map((c) => `${c} = :${c}`).join(' AND ')} AND day BETWEEN :from AND :to`;
  try {
    return await sequelize().transaction({ isolationLevel: Transaction.ISOLATION_LEVELS.READ_COMMITTED }, async (t) => {
      const rows = await select<Row>(
        `SELECT ${key.join(', ')}, n${bounds ? ', lo_id, hi_id' : ''} FROM ${table} FORCE INDEX (PRIMARY) WHERE ${inSpan} ORDER BY ${key.join(', ')} FOR UPDATE NOWAIT`,
        values, { transaction: t },
      );
      // Rows of a day and status (or value) are adjacent in key order.
      const keep: Row[] = [];
      const drop: Row[] = [];
      for (let i = 0; i < rows.length;) {
        let j = i + 1;
        while (j < rows.length && rest.every((c) => rows[j][c] === rows[i][c]) && rows[j].day === rows[i].day) j++;
        const day = rows.slice(i, j);
        const n = day.reduce((s, r) => s + Number(r.n), 0);
        if (n === 0) drop.push(...day);
        else if (day.length > 1) {
          keep.push({
            ...day[0], n, ...(bounds ? { lo_id: Math.min(...day.map((r) => r.lo_id)), hi_id: Math.max(...day.map((r) => r.hi_id)) } : {}),
          });
          drop.push(...day.slice(1));
        }
        i = j;
      }
      // Each row by its whole primary key (rows this transaction holds), one statement per row
      // in one round trip: a statement naming many keys may scan the table and wait on rows
      // another transaction holds (db/select.ts, `batch`).
      const byKey = key.map((c) => `${c} = ?`).join(' AND ');
      const keyOf = (r: Row) => key.map((c) => r[c]);
      if (keep.length) {
        await execute(
          `UPDATE ${table} SET n = ?${bounds ? ', lo_id = ?, hi_id = ?' : ''} WHERE ${byKey}`,
          keep.map((r) => [r.n, ...(bounds ? [r.lo_id, r.hi_id] : []), ...keyOf(r)]), t, { batch: true },
        );
      }
      if (drop.length) await execute(`DELETE FROM ${table} WHERE ${byKey}`, drop.map(keyOf), t, { batch: true });
      return drop.length;
    });
  } catch (err) {
    if (errnoOf(err) === ER_LOCK_WAIT_TIMEOUT) return 0;
    throw err;
  }
}

export const dayCounterFoldJob = housekeeping('tickets.day-counters.fold', {
  every: () => 3600_000, counted: 'removed', message: 'past days\' ticket counter rows folded', work: () => foldDayCounters(),
});
