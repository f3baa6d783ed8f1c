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

/**
 * A column of the counters (`col`): the ticket's day there, as SQL of its columns prefixed by
 * `row` ('NEW.', 'OLD.', or '' in the fill), and whether the pairs' rows (migration 055) are kept
 * for it too. This migration's are the date columns' (DAY_COLUMNS: col 0 and 1); migration 093
 * adds the time orders' and the customer order's (061's and 062's days).
 */
export interface FilterDayColumn {
  col: number;
  day: (row: string) => string;
  pairs: boolean;
  /**
   * A column kept as differences from another's rows (migration 095): the day a ticket's rows
   * would have there (SQL, as `day`). Its rows are then +1 at the ticket's day and -1 at this
   * one, written only where the two differ; read beside the other column's (DaySource.deltaOf, listPage.ts).
   */
  base?: (row: string) => string;
}

/** The date columns' (col 0 and 1, their UTC days), with the pairs' rows. */
export const DATE_FILTER_COLUMNS: readonly FilterDayColumn[] = DAY_COLUMNS.map((c, col) => ({ col, day: (r: string) => `${r}${c} DIV ${DAY}`, pairs: true }));

/** The dims a table of this shape counts for a column: every filter column's, and the pairs'. */
const dimsOf = (shape: DayFilterShape, c: FilterDayColumn) => [
  ...DAY_FILTER_COLUMNS.keys(), ...(shape.pairs && c.pairs ? DAY_FILTER_PAIRS.map((_, i) => DAY_FILTER_COLUMNS.length + i) : []),
];

/** A change of a ticket's rows: `n` (SQL: 1, -1, or an expression) added to its (`row`) rows of dims `ds` in column `col`. */
interface Change { row: Row; col: FilterDayColumn; ds: readonly number[]; n: string }

/**
 * The rows of the changes. The value columns' rows are one statement (a statement of a trigger
 * costs more than a row: docs/performance.md, "Trigger statements"); a flag's rows, written only
 * when the ticket has it set, one per flag and row (OLD, NEW) for all columns. An upsert, not an
 * UPDATE, for a removal too: a past day's folded rows (migration 051) may have none for the slot.
 */
function upsert(shape: DayFilterShape, changes: readonly Change[]): string {
  const head = `INSERT INTO ticket_day_filter_counts (col, state, dim, val, ${shape.pairs ? 'val2, ' : ''}day, ${shape.byStatus ? 'status_id, ' : ''}slot, n)`;
  const tuple = ({ row, col, n }: Change, d: number) => {
    const [a, b] = columnsOf(d);
    return `(${col.col}, ${STATE(row)}, ${d}, ${row}.${a}, ${shape.pairs ? `${b ? `${row}.${b}` : '0'}, ` : ''}${col.day(`${row}.`)}, ${shape.byStatus ? `${row}.status_id, ` : ''}${row}.id MOD ${DAY_SLOTS}, ${n})`;
  };
  const statement = (tuples: string[]) => `${head}
  VALUES ${tuples.join(',\n    ')}
  ON DUPLICATE KEY UPDATE n = n + VALUES(n)`;
  const values = changes.flatMap((c) => c.ds.filter((d) => !isFlag(d)).map((d) => tuple(c, d)));
  const flags = (['OLD', 'NEW'] as const).flatMap((row) => [...DAY_FILTER_COLUMNS.keys()].filter(isFlag).flatMap((d) => {
    const tuples = changes.filter((c) => c.row === row && c.ds.includes(d)).map((c) => tuple(c, d));
    return tuples.length ? [`IF ${row}.${DAY_FILTER_COLUMNS[d]} = 1 THEN ${statement(tuples)}; END IF`] : [];
  }));
  return [...(values.length ? [statement(values)] : []), ...flags].map((sql) => `${sql};`).join('\n    ');
}

/**
 * The triggers' SQL, and the fill's: one INSERT ... SELECT per column and dim, for the table as it
 * is (`byStatus`: per status too, as migration 054 made it, and then a status's change moves the
 * ticket's rows as a change of day does; `pairs`: migration 055's rows of DAY_FILTER_PAIRS).
 */
function dayFilterCountSql(shape: DayFilterShape, all: readonly FilterDayColumn[]) {
  const columns: readonly FilterDayColumn[] = all.filter((c) => !c.base);
  const deltas: readonly FilterDayColumn[] = all.filter((c) => c.base);
  const every = (row: Row, n: string, cs = columns) => upsert(shape, cs.map((col) => ({ row, col, ds: dimsOf(shape, col), n })));
  // A difference column's rows of a ticket (`sign` 1: add them, -1: remove them): where its day is
  // not its base day, +sign at the day and -sign at the base day (a merged ticket has none).
  const delta = (row: Row, sign: '1' | '-1', cs = deltas) => cs.map((c) => {
    const base: FilterDayColumn = { ...c, day: c.base! };
    const ds = dimsOf(shape, c);
    const rows = upsert(shape, [{ row, col: c, ds, n: sign }, { row, col: base, ds, n: sign === '1' ? '-1' : '1' }]);
    return `IF ${row}.merged_into_id IS NULL AND ${c.day(`${row}.`)} <> ${c.base!(`${row}.`)} THEN ${rows} END IF;`;
  }).join('\n    ');
  // What moves the ticket between the rows of every column: its state, merge or (byStatus) status.
  const movesAll = `${STATE('OLD')} <> ${STATE('NEW')} OR NOT (OLD.merged_into_id <=> NEW.merged_into_id)${shape.byStatus ? ' OR OLD.status_id <> NEW.status_id' : ''}`;
  const move = (cs: readonly FilterDayColumn[]) => `IF OLD.merged_into_id IS NULL THEN ${every('OLD', '-1', cs)} END IF;
      IF NEW.merged_into_id IS NULL THEN ${every('NEW', '1', cs)} END IF;`;
  const sameDay = (c: FilterDayColumn) => `${c.day('OLD.')} = ${c.day('NEW.')}`;
  // Each column whose day changed moves all its rows; then the rows of the values that changed
  // move within the day, for every column at once (`changed`: a column whose day changed adds 0
  // there, to the rows it has just written).
  const moved = columns.map((c) => `IF NOT (${sameDay(c)}) THEN
      ${move([c])}
    END IF;`).join('\n    ');
  // Each filter column whose value changed moves the rows of its dims (its own and its pairs') of
  // the columns `cs` in one statement (`rowsOf`: a column's rows of a dim), not one statement per
  // dim; a pair both of whose columns changed moves in the first one's statement (`once`: the
  // second adds 0 there, to the rows just written).
  const valueMoves = (cs: readonly FilterDayColumn[], rowsOf: (c: FilterDayColumn, d: number, once: readonly string[]) => Change[]) => DAY_FILTER_COLUMNS.map((x, i) => {
    const earlier = (d: number) => columnsOf(d).filter((y) => DAY_FILTER_COLUMNS.indexOf(y as typeof x) < i).map((y) => `OLD.${y} = NEW.${y}`);
    const rows = cs.flatMap((c) => dimsOf(shape, c).filter((d) => columnsOf(d).includes(x)).flatMap((d) => rowsOf(c, d, earlier(d))));
    return `IF OLD.${x} <> NEW.${x} THEN ${upsert(shape, rows)} END IF;`;
  }).join('\n      ');
  /** `sign`1 where all of `when` hold (SQL conditions), else 0. */
  const oneWhere = (when: readonly string[], sign: '-' | '') => (when.length ? `IF(${when.join(' AND ')}, ${sign}1, 0)` : `${sign}1`);
  const changed = valueMoves(columns, (c, d, once) => [
    { row: 'OLD', col: c, ds: [d], n: oneWhere([sameDay(c), ...once], '-') }, { row: 'NEW', col: c, ds: [d], n: oneWhere([sameDay(c), ...once], '') },
  ]);
  // A difference column's rows move whole when its day or base day does, or the ticket's state,
  // merge or status: removed as they were, added as they are (each only where the ticket has them).
  // Otherwise (OLD's rows then the same as NEW's but for the values), where the ticket has them,
  // those of the values that changed move: -1 at the day and +1 at the base day as they were, the
  // reverse as they are.
  const deltaMoves = (c: FilterDayColumn) => [movesAll, `NOT (${c.day('OLD.')} <=> ${c.day('NEW.')})`, `NOT (${c.base!('OLD.')} <=> ${c.base!('NEW.')})`].join(' OR ');
  const movedDeltas = deltas.map((c) => {
    const base: FilterDayColumn = { ...c, day: c.base! };
    const values = valueMoves([c], (_, d, once) => [
      { row: 'OLD', col: c, ds: [d], n: oneWhere(once, '-') }, { row: 'OLD', col: base, ds: [d], n: oneWhere(once, '') },
      { row: 'NEW', col: c, ds: [d], n: oneWhere(once, '') }, { row: 'NEW', col: base, ds: [d], n: oneWhere(once, '-') },
    ]);
    return `IF ${deltaMoves(c)} THEN
      ${delta('OLD', '-1', [c])}
      ${delta('NEW', '1', [c])}
    ELSEIF NEW.merged_into_id IS NULL AND ${c.day('NEW.')} <> ${c.base!('NEW.')} THEN
      ${values}
    END IF;`;
  }).join('\n    ');
  // A change of state, merge or status (a reply's) moves the rows of every column, each way in one
  // statement; otherwise each column whose day changed, and the rows of the values that changed.
  const update = `IF ${movesAll} THEN
      ${move(columns)}
    ELSEIF NEW.merged_into_id IS NULL THEN
    ${moved}
      ${changed}
    END IF;
    ${movedDeltas}`;
  return {
    triggers: [
      `CREATE TRIGGER tickets_day_filter_counts_insert AFTER INSERT ON tickets FOR EACH ROW
    BEGIN
    IF NEW.merged_into_id IS NULL THEN ${every('NEW', '1')} END IF;
    ${delta('NEW', '1')}
    END`,
      `CREATE TRIGGER tickets_day_filter_counts_update AFTER UPDATE ON tickets FOR EACH ROW
    BEGIN
    ${update}
    END`,
      `CREATE TRIGGER tickets_day_filter_counts_delete AFTER DELETE ON tickets FOR EACH ROW
    BEGIN
    IF OLD.merged_into_id IS NULL THEN ${every('OLD', '-1')} END IF;
    ${delta('OLD', '-1')}
    END`,
    ],
    fill: [
      ...columns.flatMap((c) => dimsOf(shape, c).map((d) => fillSql(shape, c, d))),
      ...deltas.flatMap((c) => dimsOf(shape, c).flatMap((d) => [fillSql(shape, c, d, '1'), fillSql(shape, { ...c, day: c.base! }, d, '-1', c)])),
    ],
  };
}

/**
 * One dim's rows for one column from the tickets (GROUP BY the key's columns after dim). For a
 * difference column (`of`, the column whose day and base day differ on the tickets counted): `n`
 * per ticket, added to the rows there may be (the day's +1 and the base day's -1 of one column).
 */
function fillSql(shape: DayFilterShape, c: FilterDayColumn, d: number, n = '1', of = c.base ? c : undefined): string {
  const [a, b] = columnsOf(d);
  const key = [`${a}`, ...(shape.pairs ? [b ?? '0'] : []), c.day(''), ...(shape.byStatus ? ['status_id'] : []), `id MOD ${DAY_SLOTS}`];
  const differs = of ? ` AND ${of.day('')} <> ${of.base!('')}` : '';
  return `INSERT INTO ticket_day_filter_counts (col, state, dim, val, ${shape.pairs ? 'val2, ' : ''}day, ${shape.byStatus ? 'status_id, ' : ''}slot, n)
      SELECT ${c.col}, IF(deleted_at IS NULL, 0, 1), ${d}, ${key.join(', ')}, ${n} * COUNT(*) FROM tickets
      WHERE merged_into_id IS NULL${isFlag(d) ? ` AND ${a} = 1` : ''}${differs} GROUP BY 2, ${key.map((_, i) => i + 4).join(', ')}${of ? `
      ON DUPLICATE KEY UPDATE n = n + VALUES(n)` : ''}`;
}

const TRIGGERS = ['tickets_day_filter_counts_insert', 'tickets_day_filter_counts_update', 'tickets_day_filter_counts_delete'];

/**
 * The triggers that keep the counts of `columns` (the benchmark drops them for its bulk load, then
 * fills the counts): this migration's date columns', migration 093's more.
 */
export async function createDayFilterCountTriggers(q: QueryInterface, columns = DATE_FILTER_COLUMNS): Promise<void> {
  for (const sql of dayFilterCountSql(await dayFilterShape(q), columns).triggers) await q.sequelize.query(sql);
}

export async function dropDayFilterCountTriggers(q: QueryInterface): Promise<void> {
  for (const t of TRIGGERS) await q.sequelize.query(`DROP TRIGGER IF EXISTS ${t}`);
}

/** Migration 055's rows of the pairs from the tickets, beside the single columns' rows as they are (folded or not). */
export async function fillDayFilterPairs(q: QueryInterface): Promise<void> {
  const shape = await dayFilterShape(q);
  for (const c of DATE_FILTER_COLUMNS) {
    for (const i of DAY_FILTER_PAIRS.keys()) await q.sequelize.query(fillSql(shape, c, DAY_FILTER_COLUMNS.length + i));
  }
}

/**
 * The counts of `columns` from the tickets themselves (the migrations, and the benchmark after its
 * bulk load); other columns' rows (a string order's, migration 089, filled with its marks) stay.
 */
export async function fillDayFilterCounts(q: QueryInterface, columns = DATE_FILTER_COLUMNS): Promise<void> {
  const cols = columns.map((c) => c.col).join(', ');
  await q.sequelize.query(`DELETE FROM ticket_day_filter_counts WHERE col IN (${cols})`);
  // Migration 053's span counters sum the folded rows just removed (a schema before 053 has none).
  if (await q.tableExists('ticket_span_filter_counts')) await q.sequelize.query(`DELETE FROM ticket_span_filter_counts WHERE col IN (${cols})`);
  for (const sql of dayFilterCountSql(await dayFilterShape(q), columns).fill) await q.sequelize.query(sql);
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
