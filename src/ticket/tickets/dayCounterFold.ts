import { Transaction } from 'sequelize';
import { DAY } from '../../../migrations/026_ticket_day_counts';
import { DAY_SPAN, FOLDED_SLOT } from '../../../migrations/052_ticket_span_counts';
import { VALUE_DAYS } from '../../../migrations/061_ticket_day_order_counts';
import { CUSTOMER_ORDER_COL } from '../../../migrations/062_ticket_customer_order_counts';
import { MARK_COLS } from '../../../migrations/063_ticket_order_marks';
import { MAX_ID } from '../../lib/validation';
import { now } from '../../db/entity';
import { errnoOf } from '../../db/errors';
import { execute, select } from '../../db/select';
import { sequelize } from '../../db/sequelize';
import { housekeeping } from '../../scheduler/task';

/**
 * A day counters' table: the key's columns before `day`, those between `day` and `slot`, whether
 * its rows keep id bounds, and the table of its spans' sums (migration 052), if it has one.
 */
interface DayCounterTable { table: string; prefix: readonly string[]; rest: readonly string[]; bounds: boolean; spans?: string }

const TABLES: readonly DayCounterTable[] = [
  { table: 'ticket_day_counts', prefix: ['col', 'state'], rest: ['status_id'], bounds: true, spans: 'ticket_span_counts' },
  { table: 'ticket_day_filter_counts', prefix: ['col', 'state', 'dim', 'val', 'val2'], rest: ['status_id'], bounds: false, spans: 'ticket_span_filter_counts' },
];

/** MariaDB's answer to a `NOWAIT` read that meets a row another transaction holds. */
const ER_LOCK_WAIT_TIMEOUT = 1205;

type Row = Record<string, number>;

/** The columns whose "days" are not days, all of them past: customers (migration 062) and stretches of a string order (063). */
const UNDATED_COLS: readonly number[] = [CUSTOMER_ORDER_COL, ...MARK_COLS];

/**
 * The end (exclusive) of the past days in a span of a counters' column: today, or among the time
 * days of migration 061's order columns (from VALUE_DAYS on), today's time day (their NULL blocks'
 * days are created_at days, past as any); an undated column's all.
 */
const pastEnd = (col: number, span: number, today: number) => {
  if (UNDATED_COLS.includes(col)) return (span + 1) * DAY_SPAN;
  return span * DAY_SPAN >= VALUE_DAYS ? VALUE_DAYS + today : today;
};

/**
 * Folds the day counters of the days before today (UTC) into one row per day and status (and
 * filter value): migrations 051-054 (and 061's time days before today's, 062's customers, 063's
 * stretches), of the columns `only` names (all when absent). Returns how many rows it removed.
 *
 * A day's rows at the triggers' slots are summed into its row at `FOLDED_SLOT` (the id bounds
 * widened to all of them); a day whose rows sum to 0 counts no ticket and loses them all. What a
 * span folds is added to its span's row (`ticket_span_counts`, `ticket_span_filter_counts`) in the
 * same transaction, so that row stays the sum of its days' folded rows. Each span of days is one
 * transaction at READ COMMITTED that locks its rows with `NOWAIT` (its key's range, never a scan
 * of the table) and then writes only those, each by its primary key: the fold never waits on a
 * ticket's write (nor can a ticket's transaction wait on it and then be chosen as a deadlock's
 * victim); a span whose rows a write holds is left to the next run. Only folds write the folded
 * rows and the spans' rows (a split of a string order's stretch, ./orderMarks.ts, writes the
 * triggers' rows, as a trigger does).
 */
export async function foldDayCounters(at = now(), only?: readonly number[]): Promise<number> {
  const today = Math.floor(at / DAY);
  let removed = 0;
  for (const counters of TABLES) {
    const { table, prefix } = counters;
    // The spans that hold a past day with rows at the triggers' slots (the table's own rows: no ticket is read).
    const spans = await select<Row>(
      `SELECT DISTINCT ${prefix.join(', ')}, day DIV ${DAY_SPAN} AS span FROM ${table}
       WHERE slot < ${FOLDED_SLOT} AND (day < :today OR day BETWEEN ${VALUE_DAYS} AND :timeToday - 1 OR col IN (${UNDATED_COLS.join(', ')}))${only ? ' AND col IN (:only)' : ''}`,
      { today, timeToday: VALUE_DAYS + today, only },
    );
    for (const span of spans) removed += await foldSpan(counters, span, today);
  }
  return removed;
}

/** One span's fold (foldDayCounters): the rows it removed, 0 when a write holds one of them. */
async function foldSpan({ table, prefix, rest, bounds, spans: spanTable }: DayCounterTable, span: Row, today: number): Promise<number> {
  // A string order's stretches (migration 063) have no spans: they are summed in the marks' order, not by their numbers.
  const spans = MARK_COLS.includes(span.col) ? undefined : spanTable;
  const key = [...prefix, 'day', ...rest, 'slot'];
  const values: Record<string, unknown> = {
    from: span.span * DAY_SPAN, to: Math.min((span.span + 1) * DAY_SPAN, pastEnd(span.col, span.span, today)) - 1, ...Object.fromEntries(prefix.map((c) => [c, span[c]])),
  };
  const inSpan = `${prefix.map((c) => `${c} = :${c}`).join(' AND ')} AND day BETWEEN :from AND :to`;
  try {
    return await sequelize().transaction({ isolationLevel: Transaction.ISOLATION_LEVELS.READ_COMMITTED }, async (t) => {
      const rows = await select<Row>(
        `SELECT ${key.join(', ')}, n${bounds ? ', lo_id, hi_id' : ''} FROM ${table} FORCE INDEX (PRIMARY) WHERE ${inSpan} ORDER BY ${key.join(', ')} FOR UPDATE NOWAIT`,
        values, { transaction: t },
      );
      const keep: Row[] = [];
      const drop: Row[] = [];
      let created = 0;
      /** Per status (`rest`), what the span's folded rows gained: their sum's change and the bounds of the rows kept. */
      const gained = new Map<string, Row>();
      // Rows of a day and status (or value) are adjacent in key order, the folded one last.
      for (let i = 0; i < rows.length;) {
        let j = i + 1;
        while (j < rows.length && rest.every((c) => rows[j][c] === rows[i][c]) && rows[j].day === rows[i].day) j++;
        const day = rows.slice(i, j);
        i = j;
        const unfolded = day.filter((r) => r.slot !== FOLDED_SLOT);
        if (!unfolded.length) continue;
        const n = day.reduce((s, r) => s + Number(r.n), 0);
        const folded: Row = { ...day[0], slot: FOLDED_SLOT, n, ...(bounds ? { lo_id: Math.min(...day.map((r) => r.lo_id)), hi_id: Math.max(...day.map((r) => r.hi_id)) } : {}) };
        if (n === 0) drop.push(...day);
        else {
          keep.push(folded);
          drop.push(...unfolded);
          if (unfolded.length === day.length) created++;
        }
        if (!spans) continue;
        // The folded row's sum changes by the unfolded rows' (to 0, when the day's rows go).
        const g = rest.map((c) => folded[c]).join();
        // (Bounds no kept row gave: LEAST and GREATEST keep the span's own; a new row with none sums to 0, deleted below.)
        const was = gained.get(g) ?? { ...Object.fromEntries(rest.map((c) => [c, folded[c]])), n: 0, ...(bounds ? { lo_id: MAX_ID, hi_id: 0 } : {}) };
        was.n += unfolded.reduce((s, r) => s + Number(r.n), 0);
        if (n !== 0 && bounds) Object.assign(was, { lo_id: Math.min(was.lo_id, folded.lo_id), hi_id: Math.max(was.hi_id, folded.hi_id) });
        gained.set(g, was);
      }
      // The folded rows, by their whole keys: a row not there yet is an insert, which an index gap
      // another transaction has locked would make wait, so it does not wait (a lock wait timeout
      // of 0: the span is left for the next run, as for NOWAIT).
      const columns = [...key, 'n', ...(bounds ? ['lo_id', 'hi_id'] : [])];
      if (keep.length) {
        await execute(
          `SET STATEMENT innodb_lock_wait_timeout = 0 FOR INSERT INTO ${table} (${columns.join(', ')}) VALUES ${keep.map(() => `(${columns.map(() => '?').join(', ')})`).join(', ')}
           ON DUPLICATE KEY UPDATE n = VALUES(n)${bounds ? ', lo_id = VALUES(lo_id), hi_id = VALUES(hi_id)' : ''}`,
          keep.flatMap((r) => columns.map((c) => r[c])), t,
        );
      }
      // The rows folded, each by its whole primary key (rows this transaction holds), one statement
      // per row in one round trip: a statement naming many keys may scan the table and wait on
      // rows another transaction holds (db/select.ts, `batch`).
      const byKey = key.map((c) => `${c} = ?`).join(' AND ');
      const keyOf = (r: Row) => key.map((c) => r[c]);
      if (drop.length) await execute(`DELETE FROM ${table} WHERE ${byKey}`, drop.map(keyOf), t, { batch: true });
      if (spans && gained.size) {
        // Only folds write the spans' rows: they may wait on each other here, never on a ticket's write.
        const spanKey = [...prefix, 'span', ...rest];
        const keyOfSpan = (g: Row) => [...prefix.map((c) => span[c]), span.span, ...rest.map((c) => g[c])];
        const sums = ['n', ...(bounds ? ['lo_id', 'hi_id'] : [])];
        await execute(
          `INSERT INTO ${spans} (${[...spanKey, ...sums].join(', ')}) VALUES (${[...spanKey, ...sums].map(() => '?').join(', ')})
           ON DUPLICATE KEY UPDATE n = n + VALUES(n)${bounds ? ', lo_id = LEAST(lo_id, VALUES(lo_id)), hi_id = GREATEST(hi_id, VALUES(hi_id))' : ''}`,
          [...gained.values()].map((g) => [...keyOfSpan(g), ...sums.map((c) => g[c])]), t, { batch: true },
        );
        // A span's row that sums to 0 counts no ticket (none of its days has a folded row left).
        await execute(`DELETE FROM ${spans} WHERE ${spanKey.map((c) => `${c} = ?`).join(' AND ')} AND n = 0`, [...gained.values()].map(keyOfSpan), t, { batch: true });
      }
      return drop.length - created;
    });
  } catch (err) {
    if (errnoOf(err) === ER_LOCK_WAIT_TIMEOUT) return 0;
    throw err;
  }
}

export const dayCounterFoldJob = housekeeping('tickets.day-counters.fold', {
  every: () => 3600_000, counted: 'removed', message: 'past days\' ticket counter rows folded', work: () => foldDayCounters(),
});
