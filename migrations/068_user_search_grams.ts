import type { QueryInterface } from 'sequelize';
import { createTriggers, dropTriggers, type TriggerSql } from './triggers';

export const name = '068_user_search_grams';

/**
 * The user list's `search`, `firstname` and `lastname` filters match a part of a name or address
 * (`LIKE '%term%'`), which no index of the column serves: each read every person (100-170 ms at
 * 124,000 users). `user_search_grams` holds every three-character part (trigram) of each
 * person's full name (`CONCAT_WS(' ', firstname, lastname)`, which holds both names) and address,
 * in the names' collation, a row per distinct gram and person. A value that contains the term
 * contains each of the term's grams, so the filters narrow the people to those holding the
 * rarest of them (src/db/searchGrams.ts) before the LIKE decides.
 *
 * Sound for the collation: LIKE compares a pattern character by character (`'Straße' LIKE
 * '%strasse%'` is false), so a match's characters are equal one by one, and so are its grams under
 * the gram column's collation. The address is binary and stored lower-cased; its grams compare in
 * the names' collation, which can only find more people, never fewer (the LIKE decides).
 *
 * Kept by triggers on `users`: a person's insert writes their grams; an update that changes a name
 * or the address (compared as bytes: a change the collation deems equal, `Strasse` to `Straße`,
 * changes the grams) writes them again; a delete takes them away.
 */

/**
 * How a text is cut into the parts its record is found by: the `seq`-th part (`nth`) and how many
 * parts it has (`count`), for `seq` from MariaDB's sequence engine (`sequence`, seq_1_to_N: no text
 * has more than N parts), kept in `column` of the grams' table.
 */
export interface Parts {
  column: string;
  type: string;
  sequence: string;
  nth: (text: string) => string;
  count: (text: string) => string;
}

/** The gram of a text too long to hold grams (four characters: no three-character gram is equal to it). */
export const LONG_TEXT = 'long';

/**
 * The three-character parts (grams) of a text of at most 511 characters, in the names' collation.
 * With `longerThan`, a longer text holds no grams but one part, LONG_TEXT, which every look-up
 * includes: a long text costs one row, not one per character, and is still found.
 */
export function grams(longerThan?: number): Parts {
  const gram = (text: string) => `SUBSTRING(${text}, seq, 3)`;
  const count = (text: string) => `CHAR_LENGTH(${text}) - 2`;
  const long = (text: string) => `CHAR_LENGTH(${text}) > ${longerThan}`;
  return {
    column: 'gram',
    type: `VARCHAR(${longerThan ? LONG_TEXT.length : 3}) CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`,
    sequence: 'seq_1_to_509',
    nth: longerThan ? (text) => `IF(${long(text)}, '${LONG_TEXT}', ${gram(text)})` : gram,
    count: longerThan ? (text) => `IF(${long(text)}, 1, ${count(text)})` : count,
  };
}

/** A table whose texts are indexed by their parts: grams (this migration's people, 069's organisations, 070's custom field values) or option ids (071). */
export interface GramSource {
  table: string;
  /** The parts' table: ([scope,] part, owner), its primary key. */
  grams: string;
  owner: string;
  /** The record a row's parts belong to: the row itself (`id`, the default) or the record a column names. */
  ownerColumn?: string;
  /** A column of the row its parts are looked up within (a custom field's id), first in the key. */
  scope?: string;
  /**
   * The table whose ids the scope holds (`custom_fields`), when its delete cascades to the
   * source's rows: a cascaded delete runs no trigger, so a trigger of its own (`trigger`) takes
   * the scope's parts away first.
   */
  scopeTable?: { table: string; trigger: string };
  /** How its texts are cut (the default: `grams()`). */
  parts?: Parts;
  /** Its triggers are named `<triggers>_insert`, `_update` and `_delete` (the default: `<table>_search_grams`). */
  triggers?: string;
  /** The texts of row `r` (`NEW`, `OLD`, or the table's row), each an expression in the names' collation. */
  texts: (r: string) => string[];
  /** The columns the texts and keys are made of: a change of one writes the parts again. */
  columns: string[];
}

/** A person's full name and address. */
export const PEOPLE: GramSource = {
  table: 'users', grams: 'user_search_grams', owner: 'user_id',
  texts: (r) => [`CONCAT_WS(' ', ${r}.firstname, ${r}.lastname)`, `${r}.email COLLATE utf8mb4_unicode_ci`],
  columns: ['firstname', 'lastname', 'email'],
};

const partsOf = (s: GramSource) => s.parts ?? grams();

/**
 * The parts of row `r`'s texts, as rows ([scope,] part, owner): a row per position of each text,
 * of each row of `from` (nothing for a trigger's row). A part that repeats within a record is one row
 * of the table (the primary key: `ON DUPLICATE KEY`).
 */
export const gramRows = (s: GramSource, r: string, from = ''): string => s.texts(r)
  .map((text) => {
    const p = partsOf(s);
    const scope = s.scope ? `${r}.${s.scope} AS ${s.scope}, ` : '';
    const owner = `${r}.${s.ownerColumn ?? 'id'} AS ${s.owner}`;
    // The table first, each row's positions a range of the sequence: joined the other way, the
    // optimiser reads every row once per position (a million values' fill: 146 s, not 1.4).
    return `SELECT ${scope}${p.nth(text)} AS ${p.column}, ${owner} FROM ${from ? `${from} STRAIGHT_JOIN ` : ''}${p.sequence}
      WHERE seq <= ${p.count(text)}`;
  })
  .join('\n    UNION ALL ');

const keyOf = (s: GramSource) => [...(s.scope ? [s.scope] : []), partsOf(s).column, s.owner];

const insertGrams = (s: GramSource, rows: string) =>
  `INSERT INTO ${s.grams} (${keyOf(s).join(', ')}) ${rows} ON DUPLICATE KEY UPDATE ${s.owner} = VALUES(${s.owner})`;

/** Takes `OLD`'s grams away, each by its key (the record's grams are exactly these). */
const deleteOldGrams = (s: GramSource) =>
  `DELETE g FROM ${s.grams} g JOIN (${gramRows(s, 'OLD')}) was ON ${keyOf(s).map((c) => `g.${c} = was.${c}`).join(' AND ')}`;

/**
 * The triggers that keep a source's grams: an insert writes the record's; an update that changes
 * one of the columns, compared as bytes (a change the collation deems equal, `Strasse` to
 * `Straße`, changes the grams), takes the old away by their keys and writes the new; a delete
 * takes them away.
 */
export function gramTriggers(s: GramSource): TriggerSql {
  const same = s.columns.map((c) => `BINARY NEW.${c} <=> BINARY OLD.${c}`).join(' AND ');
  const name = s.triggers ?? `${s.table}_search_grams`;
  return {
    [`${name}_insert`]: `AFTER INSERT ON ${s.table} FOR EACH ROW ${insertGrams(s, gramRows(s, 'NEW'))}`,
    [`${name}_update`]: `AFTER UPDATE ON ${s.table} FOR EACH ROW
    IF NOT (${same}) THEN
      ${deleteOldGrams(s)};
      ${insertGrams(s, gramRows(s, 'NEW'))};
    END IF`,
    [`${name}_delete`]: `AFTER DELETE ON ${s.table} FOR EACH ROW ${deleteOldGrams(s)}`,
  };
}

/** The trigger that takes a scope's parts away before its record's delete cascades (none without `scopeTable`). */
const scopeTriggers = (s: GramSource): TriggerSql => (s.scopeTable ? {
  [s.scopeTable.trigger]: `BEFORE DELETE ON ${s.scopeTable.table} FOR EACH ROW DELETE FROM ${s.grams} WHERE ${s.scope} = OLD.id`,
} : {});

/** Creates the source's grams table and triggers, then fills it from every record. */
export async function indexGrams(q: QueryInterface, s: GramSource): Promise<void> {
  // No foreign key and no index of the owner: each would cost every gram's insert a look-up (at
  // 20,000 people, 3,000 inserts of a person: 392 µs each with neither, 516 with both). A
  // record's grams leave by their keys, in the triggers of its update and delete; a gram left
  // behind by some other way would only make the LIKE read one record more.
  await q.sequelize.query(`CREATE TABLE ${s.grams} (${s.scope ? `
    ${s.scope} INT UNSIGNED NOT NULL,` : ''}
    ${partsOf(s).column} ${partsOf(s).type} NOT NULL,
    ${s.owner} INT UNSIGNED NOT NULL,
    PRIMARY KEY (${keyOf(s).join(', ')})
  ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
  await createTriggers(q, gramTriggers(s));
  // After the triggers (migrations run before the web processes start: nothing else writes now).
  await q.sequelize.query(insertGrams(s, gramRows(s, s.table, s.table)));
  await createTriggers(q, scopeTriggers(s));
}

export async function dropGrams(q: QueryInterface, s: GramSource): Promise<void> {
  await dropTriggers(q, scopeTriggers(s));
  await dropTriggers(q, gramTriggers(s));
  await q.sequelize.query(`DROP TABLE IF EXISTS ${s.grams}`);
}

export const up = (q: QueryInterface): Promise<void> => indexGrams(q, PEOPLE);
export const down = (q: QueryInterface): Promise<void> => dropGrams(q, PEOPLE);
