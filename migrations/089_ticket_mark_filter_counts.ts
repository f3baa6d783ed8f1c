import type { QueryInterface } from 'sequelize';
import { DAY_SLOTS, createDayCountTriggers, dropDayCountTriggers, type DayCountColumn } from './026_ticket_day_counts';
import { DAY_FILTER_COLUMNS } from './028_ticket_day_filter_counts';
import {
  DAY_MARKED_COLUMNS, MARK_COLS, createDayMarkCountTriggers, eachStretch, markCol, stretchTickets, type MarkedOrder,
} from './063_ticket_order_marks';

export const name = '089_ticket_mark_filter_counts';

/**
 * A deep page of the ticket list in a string order (`subject`, `number`) narrowed by a priority, a
 * department, a brand, a channel or a flag (with a status or not) was positioned by nothing: migration
 * 063's stretches counted each status's tickets only, so the page walked the order's index from
 * the nearer end (at 1M, `priority=1&start=100,000` by `subject` read about 400,000 entries: 108
 * ms; by `number`, whose index does not hold the priority, about 600 ms).
 *
 * The stretches now count those columns' values too, as migration 028's rows do a day's:
 * rows of `ticket_day_filter_counts` with the order's `col` (6, 7), the stretch in `day`, the
 * status, one column's value per `dim` (`val2` 0; no pairs). A flag's rows (`internal`, `locked`,
 * `assigned`) count its tickets of either value, 0 and 1, unlike a day's (those that have it set
 * only): `assigned=-1` is then a row of its own, not a difference. The same trigger that looks a
 * ticket's stretch up writes them, from the stretch it read once (026's `also`): a create adds to
 * seven rows per order in one statement; a change of status, subject or number moves them with
 * the stretch's own rows; a change of those columns alone looks the stretch up and moves the
 * changed columns' rows. A split (src/ticket/tickets/orderMarks.ts) moves them with the status counts, under
 * the same latch; the fold folds them as it folds the filter rows of a day (no spans).
 * listPage.ts positions such a page by them (markPositionSql).
 */

/** The filter columns a string order's stretches count, each of its values (their dim is their index in DAY_FILTER_COLUMNS). */
export const MARK_FILTER_COLUMNS = DAY_FILTER_COLUMNS;
const dimOf = (column: string) => DAY_FILTER_COLUMNS.indexOf(column as (typeof DAY_FILTER_COLUMNS)[number]);

const HEAD = 'INSERT INTO ticket_day_filter_counts (col, state, dim, val, val2, day, status_id, slot, n)';

/**
 * A ticket's rows of the filter columns in a stretch: every column's, each change's in one
 * statement; or where only some values changed, each changed column's two rows in one, under an
 * IF of its own (a priority changed alone moves two rows, not fourteen of which twelve are
 * unchanged; an IF costs less than a statement, and a statement more than a row).
 */
const filterRows = (col: number): NonNullable<DayCountColumn['also']> => {
  const tuple = (row: 'NEW' | 'OLD', c: string, day: string, n: 1 | -1) => `(${col}, 0, ${dimOf(c)}, ${row}.${c}, 0, ${day}, ${row}.status_id, ${row}.id MOD ${DAY_SLOTS}, ${n})`;
  const upsert = (tuples: string[]) => `${HEAD}
        VALUES ${tuples.join(', ')}
        ON DUPLICATE KEY UPDATE n = n + VALUES(n)`;
  return {
    rows: (changes) => upsert(changes.flatMap(({ row, day, n }) => MARK_FILTER_COLUMNS.map((c) => tuple(row, c, day, n)))),
    changed: MARK_FILTER_COLUMNS.map((c) => `OLD.${c} <> NEW.${c}`).join(' OR '),
    moves: (day) => MARK_FILTER_COLUMNS.map((c) => `IF OLD.${c} <> NEW.${c} THEN ${upsert([tuple('OLD', c, day, -1), tuple('NEW', c, day, 1)])}; END IF;`).join('\n      '),
  };
};

/** Every column the day counters' triggers keep since this migration: 063's, the string orders' with their filter rows. */
export const DAY_MARK_FILTER_COLUMNS: DayCountColumn[] = DAY_MARKED_COLUMNS.map((c) => (MARK_COLS.includes(c.col) ? { ...c, also: filterRows(c.col) } : c));

/** The current triggers (the benchmark's bulk load uses these, as the migrations do). */
export const createDayMarkFilterCountTriggers = (q: QueryInterface) => createDayCountTriggers(q, true, DAY_MARK_FILTER_COLUMNS);

/**
 * The string orders' filter rows from the tickets, a stretch at a time (after the marks): each
 * stretch a range of the order's index, one statement per stretch for the seven columns.
 */
export async function fillMarkFilterCounts(q: QueryInterface): Promise<void> {
  await q.sequelize.query(`DELETE FROM ticket_day_filter_counts WHERE col IN (${MARK_COLS.join(', ')})`);
  await eachStretch(q, (column, to, replacements) => q.sequelize.query(
    `${HEAD} SELECT ${markCol(column)}, 0, dim, val, 0, :day, status_id, :day MOD ${DAY_SLOTS}, n FROM (${stretchFilterCounts(column, to)}) s`, { replacements },
  ));
}

/**
 * A stretch's tickets (stretchTickets' bounds) per filter column's value and status, as rows `dim,
 * val, status_id, n`: the stretch read once, a range of the order's index, grouped by the status
 * and every filter column together (at most one group per ticket), then each group counted once
 * per column (joined to the columns' dims). The fill's and a split's. A UNION ALL of one GROUP BY
 * per column read the stretch seven times: at 1M, 60 stretches of `number` (whose index holds no
 * filter column: each read takes the rows) 2,035 → 452 ms, of `subject` 959 → 260, the same rows.
 */
export const stretchFilterCounts = (column: MarkedOrder, to: boolean) => {
  const columns = MARK_FILTER_COLUMNS.join(', ');
  const valueOf = `CASE d.dim ${MARK_FILTER_COLUMNS.map((c) => `WHEN ${dimOf(c)} THEN g.${c}`).join(' ')} END`;
  return `SELECT d.dim, ${valueOf} AS val, g.status_id, SUM(g.n) AS n
    FROM (SELECT status_id, ${columns}, COUNT(*) AS n FROM ${stretchTickets(column, to)} GROUP BY status_id, ${columns}) g
    JOIN (${MARK_FILTER_COLUMNS.map((c) => `SELECT ${dimOf(c)} AS dim`).join(' UNION ALL ')}) d
    GROUP BY d.dim, val, g.status_id`;
};

export async function up(q: QueryInterface): Promise<void> {
  await dropDayCountTriggers(q);
  await createDayMarkFilterCountTriggers(q);
  // After the triggers (migrations run before the web processes start: nothing else writes now).
  await fillMarkFilterCounts(q);
}

export async function down(q: QueryInterface): Promise<void> {
  await dropDayCountTriggers(q);
  await createDayMarkCountTriggers(q);
  await q.sequelize.query(`DELETE FROM ticket_day_filter_counts WHERE col IN (${MARK_COLS.join(', ')})`);
}
