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
 * rarest of them (src/user/users/searchGrams.ts) before the LIKE decides.
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

/** The person's two texts of row `r` (`NEW`, `OLD`, or a table's row): the full name and the address. */
const TEXTS = (r: string) => [`CONCAT_WS(' ', ${r}.firstname, ${r}.lastname)`, `${r}.email COLLATE utf8mb4_unicode_ci`];

/**
 * The grams of row `r`'s texts, as rows (gram, user_id): a row per position of each text (MariaDB's
 * sequence engine numbers them; a name is at most 511 characters), read from `from` (nothing for
 * a trigger's row). A gram that repeats within a person is one row of the table (the primary key:
 * `ON DUPLICATE KEY`).
 */
export const gramRows = (r: string, from = ''): string => TEXTS(r)
  .map((text) => `SELECT SUBSTRING(${text}, seq, 3) AS gram, ${r}.id AS user_id FROM seq_1_to_509${from ? ` JOIN ${from}` : ''}
      WHERE seq <= CHAR_LENGTH(${text}) - 2`)
  .join('\n    UNION ALL ');

const insertGrams = (rows: string) => `INSERT INTO user_search_grams (gram, user_id) ${rows} ON DUPLICATE KEY UPDATE user_id = VALUES(user_id)`;

/** Takes `OLD`'s grams away, each by its key (the person's grams are exactly these). */
const deleteOldGrams = `DELETE g FROM user_search_grams g JOIN (${gramRows('OLD')}) was ON g.gram = was.gram AND g.user_id = was.user_id`;

const changed = ['firstname', 'lastname', 'email'].map((c) => `BINARY NEW.${c} <=> BINARY OLD.${c}`).join(' AND ');

export const TRIGGER_SQL: TriggerSql = {
  users_search_grams_insert: `AFTER INSERT ON users FOR EACH ROW ${insertGrams(gramRows('NEW'))}`,
  users_search_grams_update: `AFTER UPDATE ON users FOR EACH ROW
    IF NOT (${changed}) THEN
      ${deleteOldGrams};
      ${insertGrams(gramRows('NEW'))};
    END IF`,
  users_search_grams_delete: `AFTER DELETE ON users FOR EACH ROW ${deleteOldGrams}`,
};

export async function up(q: QueryInterface): Promise<void> {
  // No foreign key and no index of user_id: each would cost every gram's insert a look-up (at
  // 20,000 people, 3,000 inserts of a person: 392 µs each with neither, 516 with both). A
  // person's grams leave by their keys, in the triggers of the person's update and delete; a
  // gram left behind by some other way would only make the LIKE read one person more.
  await q.sequelize.query(`CREATE TABLE user_search_grams (
    gram VARCHAR(3) CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci NOT NULL,
    user_id INT UNSIGNED NOT NULL,
    PRIMARY KEY (gram, user_id)
  ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
  await createTriggers(q, TRIGGER_SQL);
  // After the triggers (migrations run before the web processes start: nothing else writes now).
  await q.sequelize.query(insertGrams(gramRows('users', 'users')));
}

export async function down(q: QueryInterface): Promise<void> {
  await dropTriggers(q, TRIGGER_SQL);
  await q.sequelize.query('DROP TABLE IF EXISTS user_search_grams');
}
