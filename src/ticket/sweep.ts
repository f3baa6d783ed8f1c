import { Op, type Transaction, type WhereOptions } from 'sequelize';
import { Ticket, TicketStatus } from '../db/models';
import { transaction } from '../db/transaction';

/**
 * The ticket sweeps of the scheduler: closing inactive tickets and asking resolved tickets'
 * users for feedback. Each is a bounded query on an index, in batches walked by key (never an
 * offset), and each ticket is handled in a transaction of its own that reads it again under a
 * row lock: running a sweep twice, or in two schedulers at once, changes nothing twice. Sweeps
 * rather than delayed jobs, so a Redis that restarts empty loses nothing: the database says what
 * is due.
 */

export interface SweepOptions {
  /** The moment to sweep at (UNIX seconds); now by default. */
  at?: number;
  /** Tickets per query. */
  batch?: number;
  /** Queries per run; the rest waits for the next run. */
  maxBatches?: number;
}

export const positive = (value: string | undefined): number | null => {
  const n = Number(value?.trim());
  return Number.isSafeInteger(n) && n > 0 ? n : null;
};

/**
 * The statuses that wait on the user (`auto_close`: SupportPal's "close inactive tickets"), but
 * the resolved one: the tickets that auto-close and the waiting reminders sweep.
 */
export async function waitingStatuses(resolved: number | null): Promise<number[]> {
  const where = { auto_close: 1, ...(resolved ? { id: { [Op.ne]: resolved } } : {}) };
  return (await TicketStatus.findAll({ attributes: ['id'], where })).map((s) => s.id);
}

/** Keyset paging: rows after (time, id). */
const after = (column: string, time: number, id: number): WhereOptions =>
  ({ [Op.or]: [{ [column]: { [Op.gt]: time } }, { [column]: time, id: { [Op.gt]: id } }] }) as WhereOptions;

/**
 * Walks the tickets that `due` matches by (`column`, id) from `start`, in batches, and hands each
 * to `act` in a transaction of its own, read again under a row lock and still due (a second
 * sweep finds nothing left to do). Returns how many `act` reports done.
 */
export async function sweep(
  column: 'last_reply_time' | 'resolved_time', due: () => WhereOptions, start: number, options: SweepOptions,
  act: (ticket: Ticket, t: Transaction) => Promise<boolean>,
): Promise<number> {
  const batch = options.batch ?? 100;
  let done = 0;
  let cursor: [number, number] = [start, 0];
  for (let n = 0; n < (options.maxBatches ?? 10); n++) {
    const rows = await Ticket.findAll({
      attributes: ['id', column], where: { [Op.and]: [due(), after(column, cursor[0], cursor[1])] },
      order: [[column, 'ASC'], ['id', 'ASC']], limit: batch,
    });
    for (const row of rows) {
      const acted = await transaction(async (t) => {
        const ticket = await Ticket.findOne({ where: { [Op.and]: [{ id: row.id }, due()] }, transaction: t, lock: t.LOCK.UPDATE });
        return ticket ? act(ticket, t) : false;
      });
      if (acted) done++;
    }
    if (rows.length < batch) break;
    const last = rows[rows.length - 1];
    cursor = [last[column] ?? 0, last.id];
  }
  return done;
}
