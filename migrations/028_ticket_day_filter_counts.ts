import type { QueryInterface } from 'sequelize';
import { DAY, DAY_COLUMNS, DAY_SLOTS } from './026_ticket_day_counts';

export const name = '028_ticket_day_filter_counts';

/**
 * The day counters of migrations 026 and 027 for each other counted filter of the ticket list: a
 * date range with a priority, a department, a brand, a channel, `internal`, `locked` or
 * `assigned=-1` (last year's tickets of a department) sums that filter's counters for its whole
 * days instead of COUNTing every match of the range (a year and a department at a million
 * tickets: 500,000 index entries read, 0.4 s). src/ticket/tickets/listPage.ts reads them.
 *
 * `ticket_day_filter_counts`: per date column (col, as in 026), state (listed or trashed), filter
 * column (dim: an index into DAY_FILTER_COLUMNS), the column's value (val), UTC day and slot, the
 * number of tickets (merged ones not counted). One filter at a time: a range narrowed by two of
 * them counts its matches (migration 054 keys the rows by status too: a status and one of them
 * is a sum; 055 adds rows for pairs of the value columns, DAY_FILTER_PAIRS). The flags (`internal`, `locked`,
 * `assigned`) have rows for tickets that have them set only: the others are the day's total (026)
 * less those, and most tickets have none set, so a create writes no row for them.
 *
 * Kept by triggers on tickets in the statement that writes a ticket, as 018's and 026's are.
 * Write cost: a create adds to 8-14 rows (4 columns and the flags it has, for both date columns);
 * an update moves a ticket between two rows per filter column whose value changed, and between
 * two rows per filter column for each date column whose day (or the ticket's state or merge)
 * changed: an update on the day of the ticket's previous update writes only its changed values.
 */

/** The filter columns counted, in dim order (never reorder: dim is stored). */
export const DAY_FILTER_COLUMNS = ['priority_id', 'department_id', 'brand_id', 'channel_id', 'internal', 'locked', 'assigned'] as const;
/** Columns whose rows count only the tickets that have them set (1). */
export const DAY_FLAG_COLUMNS: readonly string[] = ['internal', 'locked', 'assigned'];
/**
 * Pairs of the value columns counted together (migration 055): a pair's rows have dim
 * DAY_FILTER_COLUMNS.length + its index, the first column's value in val and the second's in val2
 * (the single columns' rows have val2 0). Never reorder: dim is stored.
 */
export const DAY_FILTER_PAIRS = [
  ['priority_id', 'department_id'], ['priority_id', 'brand_id'], ['priority_id', 'channel_id'],
  ['department_id', 'brand_id'], ['department_id', 'channel_id'], ['brand_id', 'channel_id'],
] as const;
/** The dim of a pair of DAY_FILTER_PAIRS (its columns in either order), or -1. */
export const pairDim = (a: string, b: string): number => {
  const i = DAY_FILTER_PAIRS.findIndex(([x, y]) => (x === a && y === b) || (x === b && y === a));
  return i < 0 ? -1 : DAY_FILTER_COLUMNS.length + i;
};

type Row = 'NEW' | 'OLD';
const STATE = (row: Row) => `IF(${row}.deleted_at IS NULL, 0, 1)`;
const isFlag = (d: number) => DAY_FLAG_COLUMNS.includes(DAY_FILTER_COLUMNS[d] ?? '');
/** The ticket's columns a dim counts: one, or a pair's two. */
const columnsOf = (d: number): readonly string[] => (d < DAY_FILTER_COLUMNS.length ? [DAY_FILTER_COLUMNS[d]] : DAY_FILTER_PAIRS[d - DAY_FILTER_COLUMNS.length]);

/**
 * The table's shape, which its triggers and fill follow: keyed per status too (migration 054),
 * with the pairs' rows (migration 055).
 */
export interface DayFilterShape { byStatus: boolean; pairs: boolean }

/** The table's shape as it is (a schema before 028: neither). */
export async function dayFilterShape(q: QueryInterface): Promise<DayFilterShape> {
  const columns = await q.tableExists('ticket_day_filter_counts') ? await q.describeTable('ticket_day_filter_counts') : {};
  return { byStatus: 'status_id' in columns, pairs: 'val2' in columns };
}

/** Whether the counters' rows are kept per status too (migration 054 added the column). */
export const countsByStatus = async (q: QueryInterface): Promise<boolean> => (await dayFilterShape(q)).byStatus;

/** The dims a table of this shape counts: every filter column's, and the pairs'. */
const dimsOf = (shape: DayFilterShape) => [...DAY_FILTER_COLUMNS.keys(), ...(shape.pairs ? DAY_FILTER_PAIRS.map((_, i) => DAY_FILTER_COLUMNS.length + i) : [])];

/**
 * The rows of dims `ds` of a ticket (`row`) for date column `col`, changed by `n` (1 or -1). The
 * value columns' rows are one statement (a statement of a trigger costs more than a row:
 * docs/performance.md, "Trigger statements"); a flag's row, written only when the ticket has it set,
 * one of its own. An upsert, not an UPDATE, for a removal too: a past day's folded rows (migration
 * 051) may have none for the slot.
 */
function upsert(shape: DayFilterShape, changes: readonly { row: Row; col: number; ds: readonly number[]; n: 1 | -1 }[]): string {
  const head = `INSERT INTO ticket_day_filter_counts (col, state, dim, val, ${shape.pairs ? 'val2, ' : ''}day, ${shape.byStatus ? 'status_id, ' : ''}slot, n)`;
  const tuple = (row: Row, col: number, d: number, n: 1 | -1) => {
    const [a, b] = columnsOf(d);
    return `(${col}, ${STATE(row)}, ${d}, ${row}.${a}, ${shape.pairs ? `${b ? `${row}.${b}` : '0'}, ` : ''}${row}.${DAY_COLUMNS[col]} DIV ${DAY}, ${shape.byStatus ? `${row}.status_id, ` : ''}${row}.id MOD ${DAY_SLOTS}, ${n})`;
  };
  const statement = (tuples: string[]) => `${head}
  VALUES ${tuples.join(',\n    ')}
  ON DUPLICATE KEY UPDATE n = n + VALUES(n)`;
  const values = changes.flatMap(({ row, col, ds, n }) => ds.filter((d) => !isFlag(d)).map((d) => tuple(row, col, d, n)));
  const flags = changes.flatMap(({ row, col, ds, n }) => ds.filter(isFlag).map((d) => `IF ${row}.${DAY_FILTER_COLUMNS[d]} = 1 THEN ${statement([tuple(row, col, d, n)])}; END IF`));
  return [...(values.length ? [statement(values)] : []), ...flags].map((sql) => `${sql};`).join('\n    ');
}

/**
 * The triggers' SQL, and the fill's: one INSERT ... SELECT per date column and dim, for the table
 * as it is (`byStatus`: per status too, as migration 054 made it, and then a status's change moves
 * the ticket's rows as a change of day does; `pairs`: migration 055's rows of DAY_FILTER_PAIRS).
 */
function dayFilterCountSql(shape: DayFilterShape) {
  const dims = dimsOf(shape);
  const cols = DAY_COLUMNS.map((_, c) => c);
  const every = (row: Row, n: 1 | -1, cs = cols) => upsert(shape, cs.map((col) => ({ row, col, ds: dims, n })));
  // What moves the ticket between the rows of both date columns: its state, merge or (byStatus) status.
  const movesAll = `${STATE('OLD')} <> ${STATE('NEW')} OR NOT (OLD.merged_into_id <=> NEW.merged_into_id)${shape.byStatus ? ' OR OLD.status_id <> NEW.status_id' : ''}`;
  const move = (cs: number[]) => `IF OLD.merged_into_id IS NULL THEN ${every('OLD', -1, cs)} END IF;
      IF NEW.merged_into_id IS NULL THEN ${every('NEW', 1, cs)} END IF;`;
  const perColumn = cols.map((c) => {
    const day = DAY_COLUMNS[c];
    // Otherwise only the rows whose values changed move (between rows of the same day and state):
    // a value column's two rows in one statement.
    const differs = (d: number) => columnsOf(d).map((x) => `OLD.${x} <> NEW.${x}`).join(' OR ');
    const changed = dims.map((d) => `IF ${differs(d)} THEN ${upsert(shape, [{ row: 'OLD', col: c, ds: [d], n: -1 }, { row: 'NEW', col: c, ds: [d], n: 1 }])} END IF;`).join('\n      ');
    return `IF OLD.${day} DIV ${DAY} <> NEW.${day} DIV ${DAY} THEN
      ${move([c])}
    ELSEIF NEW.merged_into_id IS NULL THEN
      ${changed}
    END IF;`;
  }).join('\n    ');
  // A change of state, merge or status (a reply's) moves the rows of both columns, each way in one
  // statement; otherwise each column whose day changed, or the rows of the values that changed.
  const update = `IF ${movesAll} THEN
      ${move(cols)}
    ELSE
    ${perColumn}
    END IF;`;
  return {
    triggers: [
      `CREATE TRIGGER tickets_day_filter_counts_insert AFTER INSERT ON tickets FOR EACH ROW
    IF NEW.merged_into_id IS NULL THEN ${every('NEW', 1)} END IF`,
      `CREATE TRIGGER tickets_day_filter_counts_update AFTER UPDATE ON tickets FOR EACH ROW
    BEGIN
    ${update}
    END`,
      `CREATE TRIGGER tickets_day_filter_counts_delete AFTER DELETE ON tickets FOR EACH ROW
    IF OLD.merged_into_id IS NULL THEN ${every('OLD', -1)} END IF`,
    ],
    fill: DAY_COLUMNS.flatMap((day, col) => dims.map((d) => fillSql(shape, day, col, d))),
  };
}

/** One dim's rows for one date column from the tickets (GROUP BY the key's columns after dim). */
function fillSql(shape: DayFilterShape, day: string, col: number, d: number): string {
  const [a, b] = columnsOf(d);
  const key = [`${a}`, ...(shape.pairs ? [b ?? '0'] : []), `${day} DIV ${DAY}`, ...(shape.byStatus ? ['status_id'] : []), `id MOD ${DAY_SLOTS}`];
  return `INSERT INTO ticket_day_filter_counts (col, state, dim, val, ${shape.pairs ? 'val2, ' : ''}day, ${shape.byStatus ? 'status_id, ' : ''}slot, n)
      SELECT ${col}, IF(deleted_at IS NULL, 0, 1), ${d}, ${key.join(', ')}, COUNT(*) FROM tickets
      WHERE merged_into_id IS NULL${isFlag(d) ? ` AND ${a} = 1` : ''} GROUP BY 2, ${key.map((_, i) => i + 4).join(', ')}`;
}

const TRIGGERS = ['tickets_day_filter_counts_insert', 'tickets_day_filter_counts_update', 'tickets_day_filter_counts_delete'];

/** The triggers that keep the counts (the benchmark drops them for its bulk load, then fills the counts). */
export async function createDayFilterCountTriggers(q: QueryInterface): Promise<void> {
  for (const sql of dayFilterCountSql(await dayFilterShape(q)).triggers) await q.sequelize.query(sql);
}

export async function dropDayFilterCountTriggers(q: QueryInterface): Promise<void> {
  for (const t of TRIGGERS) await q.sequelize.query(`DROP TRIGGER IF EXISTS ${t}`);
}

/** Migration 055's rows of the pairs from the tickets, beside the single columns' rows as they are (folded or not). */
export async function fillDayFilterPairs(q: QueryInterface): Promise<void> {
  const shape = await dayFilterShape(q);
  for (const [col, day] of DAY_COLUMNS.entries()) {
    for (const i of DAY_FILTER_PAIRS.keys()) await q.sequelize.query(fillSql(shape, day, col, DAY_FILTER_COLUMNS.length + i));
  }
}

/** The counts from the tickets themselves (the migration, and the benchmark after its bulk load). */
export async function fillDayFilterCounts(q: QueryInterface): Promise<void> {
  // The date columns' rows (a string order's, migration 089, are filled with its marks).
  const cols = DAY_COLUMNS.map((_, col) => col).join(', ');
  await q.sequelize.query(`DELETE FROM ticket_day_filter_counts WHERE col IN (${cols})`);
  // Migration 053's span counters sum the folded rows just removed (a schema before 053 has none).
  if (await q.tableExists('ticket_span_filter_counts')) await q.sequelize.query(`DELETE FROM ticket_span_filter_counts WHERE col IN (${cols})`);
  for (const sql of dayFilterCountSql(await dayFilterShape(q)).fill) await q.sequelize.query(sql);
}

export async function up(q: QueryInterface): Promise<void> {
  // A range of one value's days is one range of the key.
  await q.sequelize.query(`CREATE TABLE ticket_day_filter_counts (
    col TINYINT UNSIGNED NOT NULL,
    state TINYINT UNSIGNED NOT NULL,
    dim TINYINT UNSIGNED NOT NULL,
    val INT UNSIGNED NOT NULL,
    day INT UNSIGNED NOT NULL,
    slot TINYINT UNSIGNED NOT NULL,
    n BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (col, state, dim, val, day, slot)
  ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
  await createDayFilterCountTriggers(q);
  // After the triggers (migrations run before the web processes start: nothing else writes now).
  await fillDayFilterCounts(q);
}

export async function down(q: QueryInterface): Promise<void> {
  await dropDayFilterCountTriggers(q);
  await q.dropTable('ticket_day_filter_counts');
}
