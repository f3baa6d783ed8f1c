import { Transaction } from 'sequelize';
import { DAY_SLOTS } from '../../../migrations/026_ticket_day_counts';
import {
  MARKED_ORDERS, MARK_COLS, MARK_EVERY, keyIs, latchSql, markCol, markKeys, stretchTickets, type MarkKey, type MarkedOrder, type RunSelect,
} from '../../../migrations/063_ticket_order_marks';
import { stretchFilterCounts } from '../../../migrations/089_ticket_mark_filter_counts';
import { now } from '../../db/entity';
import { isLockConflict } from '../../db/errors';
import { execute, select } from '../../db/select';
import { sequelize } from '../../db/sequelize';
import { housekeeping } from '../../scheduler/task';
import { foldDayCounters } from './dayCounterFold';

/**
 * Splits each stretch of a string order (migration 063) that counts more than twice `every` listed
 * tickets at new marks, every `every` of its tickets, so that a positioned page skips at most
 * about that many entries. Returns the marks made. Each stretch is one transaction (splitStretch).
 */
export async function splitOrderMarks(every = MARK_EVERY, latchWaitSeconds = 1): Promise<number> {
  let made = 0;
  for (const column of MARKED_ORDERS) {
    const grown = await select<{ day: number }>(
      'SELECT day FROM ticket_day_counts WHERE col = :col AND state = 0 GROUP BY day HAVING SUM(n) > :most',
      { col: markCol(column), most: 2 * every },
    );
    for (const { day } of grown) made += await splitStretch(column, Number(day), every, latchWaitSeconds);
  }
  return made;
}

/**
 * One stretch's split, at READ COMMITTED (each statement reads what is committed when it starts):
 * 1. the column's latch, exclusively: it waits (at most `latchWaitSeconds`) for every transaction whose
 *    trigger looked a stretch up to end, and holds the next ones until the split commits, so each
 *    listed ticket is either committed and counted below, or counted by its trigger afterwards, in
 *    the stretch its look-up then finds (a locking read: it sees the new marks);
 * 2. the new marks, every `every` listed tickets from the stretch's mark to the next one;
 * 3. each new stretch's tickets per status, and per status and value of the filter columns
 *    (migration 089), counted on the order's index, moved to it from the old stretch: written as a
 *    trigger writes (an upsert of a slot's row), so the fold sums them as any.
 * A lock wait that times out, or a deadlock whose victim the split is, leaves the stretch to the next run.
 */
async function splitStretch(column: MarkedOrder, day: number, every: number, latchWaitSeconds: number): Promise<number> {
  const col = markCol(column);
  try {
    return await sequelize().transaction({ isolationLevel: Transaction.ISOLATION_LEVELS.READ_COMMITTED }, async (transaction) => {
      const run: RunSelect = <T extends object>(sql: string, values: Record<string, unknown>) => select<T>(sql, values, { transaction });
      await run(`SET STATEMENT innodb_lock_wait_timeout = ${Math.max(1, Math.round(latchWaitSeconds))} FOR ${latchSql(column, 'FOR UPDATE')}`, {});
      const [mark] = await run<{ val: string; id: number }>('SELECT val, ticket_id AS id FROM ticket_order_marks WHERE col = :col AND day = :day', { col, day });
      if (!mark) return 0;
      const from: MarkKey = { val: mark.val, id: Number(mark.id) };
      const [next] = await run<{ val: string; id: number }>(
        `SELECT val, ticket_id AS id FROM ticket_order_marks WHERE col = :col AND ${keyIs('val', 'ticket_id', '>', 'from')} ORDER BY val, ticket_id LIMIT 1`,
        { col, fromVal: from.val, fromId: from.id },
      );
      const to: MarkKey | null = next ? { val: next.val, id: Number(next.id) } : null;
      const keys = await markKeys(run, column, from, to, every);
      if (!keys.length) return 0;
      const [{ top }] = await run<{ top: number }>('SELECT MAX(day) AS top FROM ticket_order_marks WHERE col = :col', { col });
      const days = keys.map((_, i) => Number(top) + 1 + i);
      await execute('INSERT INTO ticket_order_marks (col, val, ticket_id, day) VALUES (?, ?, ?, ?)', keys.map((k, i) => [col, k.val, k.id, days[i]]), transaction, { batch: true });
      const moves: Array<[number, number, number]> = [];
      const moved = new Map<number, number>();
      /** The filter rows' moves: day, dim, value, status, n (and what leaves the old stretch, by dim, value and status). */
      const filterMoves: Array<[number, number, number, number, number]> = [];
      const filterMoved = new Map<string, number>();
      for (const [i, key] of keys.entries()) {
        const end = keys[i + 1] ?? to;
        const bounds = { fromVal: key.val, fromId: key.id, ...(end ? { toVal: end.val, toId: end.id } : {}) };
        const counts = await run<{ status_id: number; n: number }>(`SELECT status_id, COUNT(*) AS n FROM ${stretchTickets(column, !!end)} GROUP BY status_id`, bounds);
        for (const { status_id: status, n } of counts) {
          moves.push([days[i], Number(status), Number(n)]);
          moved.set(Number(status), (moved.get(Number(status)) ?? 0) + Number(n));
        }
        for (const r of await run<{ dim: number; val: number; status_id: number; n: number }>(stretchFilterCounts(column, !!end), bounds)) {
          filterMoves.push([days[i], Number(r.dim), Number(r.val), Number(r.status_id), Number(r.n)]);
          const k = `${r.dim},${r.val},${r.status_id}`;
          filterMoved.set(k, (filterMoved.get(k) ?? 0) + Number(r.n));
        }
      }
      for (const [status, n] of moved) moves.push([day, status, -n]);
      for (const [k, n] of filterMoved) {
        const [dim, val, status] = k.split(',').map(Number);
        filterMoves.push([day, dim, val, status, -n]);
      }
      if (moves.length) {
        await execute(
          `INSERT INTO ticket_day_counts (col, state, day, status_id, slot, n, lo_id, hi_id) VALUES (?, 0, ?, ?, ?, ?, 4294967295, 0)
           ON DUPLICATE KEY UPDATE n = n + VALUES(n)`,
          moves.map(([d, status, n]) => [col, d, status, d % DAY_SLOTS, n]), transaction, { batch: true },
        );
      }
      if (filterMoves.length) {
        await execute(
          `INSERT INTO ticket_day_filter_counts (col, state, dim, val, val2, day, status_id, slot, n) VALUES (?, 0, ?, ?, 0, ?, ?, ?, ?)
           ON DUPLICATE KEY UPDATE n = n + VALUES(n)`,
          filterMoves.map(([d, dim, val, status, n]) => [col, dim, val, d, status, d % DAY_SLOTS, n]), transaction, { batch: true },
        );
      }
      return keys.length;
    });
  } catch (err) {
    if (isLockConflict(err)) return 0;
    throw err;
  }
}

/**
 * The string orders' counters kept small: their rows folded (a positioned page sums them all) and
 * their grown stretches split, every minute.
 */
export const orderMarksJob = housekeeping('tickets.order-marks.split', {
  every: () => 60_000, counted: 'marks', message: 'string orders\' stretches split at new marks',
  work: async () => {
    await foldDayCounters(now(), MARK_COLS);
    return splitOrderMarks();
  },
});
