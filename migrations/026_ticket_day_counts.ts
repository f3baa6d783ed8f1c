import type { QueryInterface } from 'sequelize';

export const name = '026_ticket_day_counts';

/**
 * The ticket list's date filters at a million tickets (docs/performance.md, "Dates").
 *
 * `ticket_day_counts`: the number of listed (state 0) and trashed (state 1) tickets per UTC day of
 * `created_at` (col 0) and of `updated_at` (col 1), merged tickets not counted, kept by triggers
 * on tickets in the statement that writes a ticket (whatever writes it, like migration 018's
 * `ticket_list_counts`; these triggers are separate from those). A date range's exact count is the
 * sum of its whole days plus a COUNT over the list index's range of its partial first and last day.
 *
 * Days are `timestamp DIV 86400`: the columns hold UNIX seconds (INT UNSIGNED), so a day is a UTC
 * day whatever the session's time zone. Spread over slots by ticket id (today's rows take every
 * create and every update of the day). `lo_id`/`hi_id`: the smallest and largest ticket id ever
 * counted in the row; a ticket that leaves the row does not change them, so they bound the ids of
 * the tickets the row counts (never exactly): the page walks the id order from there. (Since
 * migration 051 a past day's rows are folded into one: a day's rows are read together.)
 *
 * Write cost: a create adds to two rows (its day of created_at and of updated_at); an update
 * writes two rows per column whose day (or state, or merge) changed: one less on the old day, one
 * more on the new one. An update on the day of the ticket's previous update writes none.
 */

export const DAY_COLUMNS = ['created_at', 'updated_at'] as const;
export const DAY_SLOTS = 8;
export const DAY = 86400;

const STATE = (row: 'NEW' | 'OLD') => `IF(${row}.deleted_at IS NULL, 0, 1)`;

/**
 * A column of the counters (`col`) and how a ticket gives its day and the ids its row bounds, as
 * SQL of the ticket's columns prefixed by `row` ('NEW.', 'OLD.', or '' in the fill). This
 * migration's: a date column's day, the ticket's id (migrations 061-063 add others). Migration
 * 063's columns also say which tickets they count (`counted`, else every unmerged one), what
 * moves a ticket between their rows (`key`, compared old to new: else its day, state and status;
 * with the id, all that its day depends on, so a ticket whose key is unchanged keeps its day) and
 * a latch each trigger takes before it looks their day up (`latch`, an expression: the latches of
 * several columns are taken in one `DO`).
 */
export interface DayCountColumn {
  col: number; day: (row: string) => string; lo: (row: string) => string; hi: (row: string) => string;
  counted?: (row: string) => string; key?: (row: string) => string; latch?: string;
  /**
   * Rows of another table kept per day of this keyed column (migration 089: the filter columns'
   * per stretch of a string order): `rows`, the statement that adds `n` to a ticket's (`row`) rows
   * on `day` (the trigger's variable), for each change; `changed`, OLD against NEW, what moves a
   * ticket between them when its day, state and status stay, and `moves`, the statements that
   * then move the rows of the values that changed (on `day`), only those.
   */
  also?: { rows: (changes: ReadonlyArray<{ row: 'NEW' | 'OLD'; day: string; n: 1 | -1 }>) => string; changed: string; moves: (day: string) => string };
}

/** The counters' column of a date column (DAY_COLUMNS[col]): its UTC day. */
export const dateDayColumn = (col: number): DayCountColumn => ({ col, day: (r) => `${r}${DAY_COLUMNS[col]} DIV ${DAY}`, lo: (r) => `${r}id`, hi: (r) => `${r}id` });
const DATE_DAY_COLUMNS = DAY_COLUMNS.map((_, col) => dateDayColumn(col));

/**
 * The triggers' and the fill's SQL. `byStatus` (migration 027): the counters also by the ticket's
 * status (a `status_id` column in the key, between day and slot); this migration's own are by day alone.
 */
function dayCountSql(byStatus: boolean, columns: readonly DayCountColumn[]) {
  const key = byStatus ? 'day, status_id, slot' : 'day, slot';
  const status = (row: 'NEW' | 'OLD') => (byStatus ? `${row}.status_id, ` : '');
  const tuple = (row: 'NEW' | 'OLD', c: DayCountColumn, n: 1 | -1, day = c.day(`${row}.`)) => `(${c.col}, ${STATE(row)}, ${day}, ${status(row)}${row}.id MOD ${DAY_SLOTS}, ${n}, ${c.lo(`${row}.`)}, ${c.hi(`${row}.`)})`;
  // One statement for the rows of several columns (a statement of a trigger costs more than a
  // row: docs/performance.md, "Trigger statements").
  const add = (row: 'NEW' | 'OLD', cs: readonly DayCountColumn[], day?: string) => `INSERT INTO ticket_day_counts (col, state, ${key}, n, lo_id, hi_id)
  VALUES ${cs.map((c) => tuple(row, c, 1, day)).join(',\n    ')}
  ON DUPLICATE KEY UPDATE n = n + 1, lo_id = LEAST(lo_id, VALUES(lo_id)), hi_id = GREATEST(hi_id, VALUES(hi_id))`;
  // An upsert, not an UPDATE: once a past day's rows are folded into one (migration 051), the
  // ticket's slot may have no row, and its departure is then a row of -1.
  const remove = (row: 'NEW' | 'OLD', cs: readonly DayCountColumn[], day?: string) => `INSERT INTO ticket_day_counts (col, state, ${key}, n, lo_id, hi_id)
  VALUES ${cs.map((c) => tuple(row, c, -1, day)).join(',\n    ')}
  ON DUPLICATE KEY UPDATE n = n - 1`;
  // What moves the ticket between the rows of every column: its state, merge or (byStatus) status.
  const movesAll = `${STATE('OLD')} <> ${STATE('NEW')} OR NOT (OLD.merged_into_id <=> NEW.merged_into_id)${byStatus ? ' OR OLD.status_id <> NEW.status_id' : ''}`;
  const moved = (c: DayCountColumn) => `${movesAll} OR ${c.key ? `NOT (${c.key('OLD.')} <=> ${c.key('NEW.')})` : `${c.day('OLD.')} <> ${c.day('NEW.')}`}`;
  /** Whether the ticket (`row`) counts in the column. */
  const counts = (row: 'NEW' | 'OLD', c: DayCountColumn) => `${row}.merged_into_id IS NULL${c.counted ? ` AND ${c.counted(`${row}.`)}` : ''}`;
  const latch = (cs: readonly DayCountColumn[]) => {
    const latches = cs.flatMap((c) => (c.latch ? [c.latch] : []));
    return latches.length ? `DO ${latches.join(', ')}; ` : '';
  };
  // The columns with conditions of their own are written one by one, under them, after their latch.
  const own = (c: DayCountColumn) => !!(c.counted || c.latch);
  const plain = columns.filter((c) => !own(c));
  // The day of a column with a key, kept in the update trigger's variable while the key is unchanged.
  const dayVar = (c: DayCountColumn) => `day_${c.col}`;
  const keyed = columns.filter((c) => c.key);
  /**
   * A ticket's (`row`) rows of one column, `rows` (add or remove), and the rows `also` keeps on the
   * same day: that day (a look-up) is then kept in the column's variable and read once.
   */
  const one = (row: 'NEW' | 'OLD', c: DayCountColumn, rows: typeof add) => {
    if (!c.also) return `${rows(row, [c])};`;
    return `SET ${dayVar(c)} = ${c.day(`${row}.`)};
        ${rows(row, [c], dayVar(c))};
        ${c.also.rows([{ row, day: dayVar(c), n: rows === add ? 1 : -1 }])};`;
  };
  /**
   * A column's move, one at a time. A ticket whose key is unchanged keeps its day (a string order's
   * stretch, a look-up each time): looked up once, and its two rows (other state or status) in one
   * statement.
   */
  const moveOne = (c: DayCountColumn) => {
    const apart = `IF ${counts('OLD', c)} THEN ${one('OLD', c, remove)} END IF;
      IF ${counts('NEW', c)} THEN ${one('NEW', c, add)} END IF;`;
    if (!c.key) return apart;
    return `IF ${counts('OLD', c)} AND ${counts('NEW', c)} AND ${c.key('OLD.')} <=> ${c.key('NEW.')} THEN
        SET ${dayVar(c)} = ${c.day('NEW.')};
        INSERT INTO ticket_day_counts (col, state, ${key}, n, lo_id, hi_id)
        VALUES ${tuple('OLD', c, -1, dayVar(c))}, ${tuple('NEW', c, 1, dayVar(c))}
        ON DUPLICATE KEY UPDATE n = n + VALUES(n), lo_id = IF(VALUES(n) > 0, LEAST(lo_id, VALUES(lo_id)), lo_id), hi_id = IF(VALUES(n) > 0, GREATEST(hi_id, VALUES(hi_id)), hi_id);
        ${c.also ? `${movedAlso(c)};` : ''}
      ELSE
      ${apart}
      END IF;`;
  };
  // Its rows of `also` from the old values to the new on the day in the variable (one statement).
  const movedAlso = (c: DayCountColumn) => c.also!.rows([{ row: 'OLD', day: dayVar(c), n: -1 }, { row: 'NEW', day: dayVar(c), n: 1 }]);
  // A column whose own rows stay may move its rows of `also` (a ticket's filter value changed).
  const alsoMoved = (c: DayCountColumn) => (c.also ? `
    ELSEIF ${counts('NEW', c)} AND (${c.also.changed}) THEN
      ${latch([c])}SET ${dayVar(c)} = ${c.day('NEW.')};
      ${c.also.moves(dayVar(c))}` : '');
  const each = (cs: readonly DayCountColumn[]) => cs.map((c) => `IF ${moved(c)} THEN
      ${latch([c])}${moveOne(c)}${alsoMoved(c)}
    END IF;`).join('\n    ');
  // A change of state, merge or status (a reply's) moves every column: the plain ones' rows in one
  // statement out and one in, the own ones' latches in one statement; otherwise each column whose
  // day changed.
  const ownColumns = columns.filter(own);
  const update = !plain.length ? each(columns) : `IF ${movesAll} THEN
      IF OLD.merged_into_id IS NULL THEN ${remove('OLD', plain)}; END IF;
      IF NEW.merged_into_id IS NULL THEN ${add('NEW', plain)}; END IF;
      ${latch(ownColumns)}${ownColumns.map(moveOne).join('\n      ')}
    ELSE
      ${each(columns)}
    END IF;`;
  const write = (row: 'NEW' | 'OLD', rows: typeof add) => `${plain.length ? `${rows(row, plain)}; ` : ''}${ownColumns.map((c) => `IF ${c.counted ? c.counted(`${row}.`) : 'TRUE'} THEN ${latch([c])}${one(row, c, rows)} END IF; `).join('')}`;
  // The variables of the columns whose day is read once (an insert's and a delete's: those with `also`).
  const declared = (cs: readonly DayCountColumn[]) => cs.map((c) => `DECLARE ${dayVar(c)} INT UNSIGNED;`).join(' ');
  const once = (row: 'NEW' | 'OLD', rows: typeof add) => {
    const body = `IF ${row}.merged_into_id IS NULL THEN ${write(row, rows)}END IF`;
    const withAlso = keyed.filter((c) => c.also);
    return withAlso.length ? `BEGIN
    ${declared(withAlso)}
    ${body};
    END` : body;
  };
  return {
    triggers: [
      `CREATE TRIGGER tickets_day_counts_insert AFTER INSERT ON tickets FOR EACH ROW
    ${once('NEW', add)}`,
      `CREATE TRIGGER tickets_day_counts_update AFTER UPDATE ON tickets FOR EACH ROW
    BEGIN
    ${declared(keyed)}
    ${update}
    END`,
      `CREATE TRIGGER tickets_day_counts_delete AFTER DELETE ON tickets FOR EACH ROW
    ${once('OLD', remove)}`,
    ],
    fill: columns.map((c) => `INSERT INTO ticket_day_counts (col, state, ${key}, n, lo_id, hi_id)
      SELECT ${c.col}, IF(deleted_at IS NULL, 0, 1), ${c.day('')}, ${byStatus ? 'status_id, ' : ''}id MOD ${DAY_SLOTS}, COUNT(*), MIN(${c.lo('')}), MAX(${c.hi('')}) FROM tickets
      WHERE merged_into_id IS NULL${c.counted ? ` AND ${c.counted('')}` : ''} GROUP BY ${byStatus ? '2, 3, 4, 5' : '2, 3, 4'}`),
  };
}

const TRIGGERS = ['tickets_day_counts_insert', 'tickets_day_counts_update', 'tickets_day_counts_delete'];

/** The triggers that keep the day counts (the benchmark drops them for its bulk load, then fills the counts). */
export async function createDayCountTriggers(q: QueryInterface, byStatus = false, columns = DATE_DAY_COLUMNS): Promise<void> {
  for (const sql of dayCountSql(byStatus, columns).triggers) await q.sequelize.query(sql);
}

export async function dropDayCountTriggers(q: QueryInterface): Promise<void> {
  for (const t of TRIGGERS) await q.sequelize.query(`DROP TRIGGER IF EXISTS ${t}`);
}

/**
 * The day counts of `columns` from the tickets themselves (the migration, and the benchmark after
 * its bulk load); the rows of other columns (a later migration's) stay as they are.
 */
export async function fillDayCounts(q: QueryInterface, byStatus = false, columns = DATE_DAY_COLUMNS): Promise<void> {
  const cols = columns.map((c) => c.col).join(', ');
  await q.sequelize.query(`DELETE FROM ticket_day_counts WHERE col IN (${cols})`);
  // Migration 052's span counters sum the folded rows just removed (a schema before 052 has none).
  if (await q.tableExists('ticket_span_counts')) await q.sequelize.query(`DELETE FROM ticket_span_counts WHERE col IN (${cols})`);
  for (const sql of dayCountSql(byStatus, columns).fill) await q.sequelize.query(sql);
}

export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query(`CREATE TABLE ticket_day_counts (
    col TINYINT UNSIGNED NOT NULL,
    state TINYINT UNSIGNED NOT NULL,
    day INT UNSIGNED NOT NULL,
    slot TINYINT UNSIGNED NOT NULL,
    n BIGINT NOT NULL DEFAULT 0,
    lo_id INT UNSIGNED NOT NULL,
    hi_id INT UNSIGNED NOT NULL,
    PRIMARY KEY (col, state, day, slot)
  ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
  await createDayCountTriggers(q);
  // After the triggers (migrations run before the web processes start: nothing else writes now).
  await fillDayCounts(q);
}

export async function down(q: QueryInterface): Promise<void> {
  await dropDayCountTriggers(q);
  await q.dropTable('ticket_day_counts');
}
