import type { QueryInterface } from 'sequelize';
import { DataTypes, QueryTypes } from 'sequelize';
import { logger } from '../src/logger';
import { EXACT, exact, fk, id, tableOptions } from './columns';

export const name = '003_uniqueness';

/**
 * Every uniqueness rule held by a unique key, so that concurrent requests cannot both pass a
 * read-then-write check; emails and domains compared exactly (binary collation, see `exact`).
 *
 * - `person_emails` is the one list of email addresses people hold: a row per user or operator
 *   main address and per additional address, in a scope (`brand:<id>` for users, `operator` for
 *   operators), with UNIQUE (email, scope). Triggers on `users` and `user_emails` keep it in step
 *   in the same statement, whichever code writes them; foreign keys delete it with its owner.
 * - `organisation_domains` carries its organisation's brand (kept equal by a foreign key on
 *   (organisation_id, brand_id) that follows a brand change), with UNIQUE (domain, brand_id).
 */

/** Columns holding an email address or a domain, made exact. */
const EXACT_COLUMNS: Array<[table: string, column: string, nullable: boolean]> = [
  ['users', 'email', false],
  ['user_emails', 'email', false],
  ['organisation_domains', 'domain', false],
  ['department_emails', 'address', false],
  ['brands', 'default_email', true],
];

const scopeOf = (row: string) => `IF(${row}.type = 'operator', 'operator', CONCAT('brand:', ${row}.brand_id))`;

const TRIGGERS: Record<string, string> = {
  users_claim_insert: `AFTER INSERT ON users FOR EACH ROW
    INSERT INTO person_emails (user_id, user_email_id, scope, email) VALUES (NEW.id, NULL, ${scopeOf('NEW')}, NEW.email)`,
  // A new main address, brand or type: the main claim takes the address, every claim the scope.
  users_claim_update: `AFTER UPDATE ON users FOR EACH ROW
    UPDATE person_emails SET scope = ${scopeOf('NEW')}, email = IF(user_email_id IS NULL, NEW.email, email)
    WHERE user_id = NEW.id AND NOT (OLD.email <=> NEW.email AND OLD.brand_id <=> NEW.brand_id AND OLD.type <=> NEW.type)`,
  user_emails_claim_insert: `AFTER INSERT ON user_emails FOR EACH ROW
    INSERT INTO person_emails (user_id, user_email_id, scope, email)
    SELECT u.id, NEW.id, ${scopeOf('u')}, NEW.email FROM users u WHERE u.id = NEW.user_id`,
  user_emails_claim_update: `AFTER UPDATE ON user_emails FOR EACH ROW
    UPDATE person_emails p JOIN users u ON u.id = NEW.user_id SET p.user_id = u.id, p.scope = ${scopeOf('u')}, p.email = NEW.email
    WHERE p.user_email_id = NEW.id`,
};

async function rows<T extends object>(q: QueryInterface, sql: string): Promise<T[]> {
  return q.sequelize.query<T>(sql, { type: QueryTypes.SELECT });
}

export async function up(q: QueryInterface): Promise<void> {
  const sql = (s: string) => q.sequelize.query(s);

  // The old rule for main addresses (a generated column compared without accents) gives way to person_emails.
  await sql('ALTER TABLE users DROP INDEX users_email_key, DROP COLUMN email_key');

  // The API stores these lower-cased; rows written otherwise would no longer match a lower-cased look-up.
  for (const [table, column] of EXACT_COLUMNS) {
    await sql(`UPDATE \`${table}\` SET \`${column}\` = LOWER(\`${column}\`) WHERE BINARY \`${column}\` <> LOWER(\`${column}\`)`);
    // Lower-casing cannot make two additional emails of one user equal under unicode_ci's unique key.
  }
  for (const [table, column, nullable] of EXACT_COLUMNS) {
    await sql(`ALTER TABLE \`${table}\` MODIFY \`${column}\` VARCHAR(255) ${EXACT} ${nullable ? 'NULL' : 'NOT NULL'}`);
  }

  await q.createTable('person_emails', {
    id: id(),
    user_id: fk('users'),
    /** The additional address this row claims; NULL for the person's main address. */
    user_email_id: fk('user_emails', 'CASCADE', true),
    scope: { type: DataTypes.STRING(20), allowNull: false },
    email: exact(),
  }, tableOptions);
  await q.addIndex('person_emails', ['email', 'scope'], { unique: true, name: 'person_emails_email_scope' });
  await q.addIndex('person_emails', ['user_id']);

  // Existing addresses. Main addresses were already unique per scope (the old key was stricter);
  // an additional address that another person already holds (possible before this key) is
  // dropped: the main address wins, then the oldest additional one.
  await sql(`INSERT INTO person_emails (user_id, user_email_id, scope, email) SELECT id, NULL, ${scopeOf('users')}, email FROM users ORDER BY id`);
  await sql(`INSERT INTO person_emails (user_id, user_email_id, scope, email)
    SELECT user_id, id, scope, email FROM (
      SELECT ue.user_id, ue.id, ${scopeOf('u')} AS scope, ue.email,
        ROW_NUMBER() OVER (PARTITION BY ${scopeOf('u')}, ue.email ORDER BY ue.id) AS n
      FROM user_emails ue JOIN users u ON u.id = ue.user_id
    ) c
    WHERE c.n = 1 AND NOT EXISTS (SELECT 1 FROM person_emails p WHERE p.email = c.email AND p.scope = c.scope)
    ORDER BY id`);
  const unclaimed = await rows<{ id: number; user_id: number; email: string }>(q,
    'SELECT ue.id, ue.user_id, ue.email FROM user_emails ue LEFT JOIN person_emails p ON p.user_email_id = ue.id WHERE p.id IS NULL ORDER BY ue.id');
  if (unclaimed.length) {
    logger.warn({ dropped: unclaimed }, `${name}: ${unclaimed.length} additional email(s) held by another person of the same brand were removed`);
    await q.bulkDelete('user_emails', { id: unclaimed.map((r) => r.id) });
  }
  for (const [trigger, body] of Object.entries(TRIGGERS)) await sql(`CREATE TRIGGER ${trigger} ${body}`);

  // Domains: one organisation per domain and brand.
  await q.addColumn('organisation_domains', 'brand_id', { type: DataTypes.INTEGER.UNSIGNED, allowNull: true });
  await sql('UPDATE organisation_domains d JOIN organisations o ON o.id = d.organisation_id SET d.brand_id = o.brand_id');
  await q.changeColumn('organisation_domains', 'brand_id', { type: DataTypes.INTEGER.UNSIGNED, allowNull: false });
  const doubled = await rows<{ id: number; organisation_id: number; domain: string }>(q,
    `SELECT DISTINCT d.id, d.organisation_id, d.domain FROM organisation_domains d
     JOIN organisation_domains e ON e.domain = d.domain AND e.brand_id = d.brand_id AND e.id < d.id ORDER BY d.id`);
  if (doubled.length) {
    logger.warn({ dropped: doubled }, `${name}: ${doubled.length} domain claim(s) made after another organisation of the brand claimed the domain were removed`);
    await q.bulkDelete('organisation_domains', { id: doubled.map((r) => r.id) });
  }
  await q.removeIndex('organisation_domains', 'organisation_domains_domain');
  await q.addIndex('organisation_domains', ['domain', 'brand_id'], { unique: true, name: 'organisation_domains_domain_brand' });
  await q.addIndex('organisations', ['id', 'brand_id'], { unique: true, name: 'organisations_id_brand' });
  await q.addIndex('organisation_domains', ['organisation_id', 'brand_id'], { name: 'organisation_domains_organisation_brand' });
  await sql(`ALTER TABLE organisation_domains ADD CONSTRAINT organisation_domains_organisation_brand_fk
    FOREIGN KEY (organisation_id, brand_id) REFERENCES organisations (id, brand_id) ON DELETE CASCADE ON UPDATE CASCADE`);
}

/** Back to 002's schema. Fails (and changes nothing it cannot undo) if accents now tell apart addresses 002 would call equal. */
export async function down(q: QueryInterface): Promise<void> {
  const sql = (s: string) => q.sequelize.query(s);
  await q.removeConstraint('organisation_domains', 'organisation_domains_organisation_brand_fk');
  await q.removeIndex('organisation_domains', 'organisation_domains_organisation_brand');
  await q.removeIndex('organisations', 'organisations_id_brand');
  await q.removeIndex('organisation_domains', 'organisation_domains_domain_brand');
  await q.addIndex('organisation_domains', ['domain']);
  await sql('ALTER TABLE organisation_domains DROP COLUMN brand_id');

  for (const trigger of Object.keys(TRIGGERS)) await sql(`DROP TRIGGER IF EXISTS ${trigger}`);
  await q.dropTable('person_emails');
  for (const [table, column, nullable] of EXACT_COLUMNS) {
    await sql(`ALTER TABLE \`${table}\` MODIFY \`${column}\` VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci ${nullable ? 'NULL' : 'NOT NULL'}`);
  }
  await sql("ALTER TABLE users ADD COLUMN email_key VARCHAR(300) AS (CONCAT(type, ':', IFNULL(brand_id, 0), ':', email)) PERSISTENT, ADD UNIQUE INDEX users_email_key (email_key)");
}
