/**
 * Migration 003 on data written under 002: mixed-case addresses, an additional email two users of
 * a brand hold (a lost race of the old read-then-write checks), an additional email that is another
 * user's main address, a domain claimed twice in a brand. They migrate; the duplicates made by the
 * old races are dropped (oldest claim kept); and `down` gives 002's schema back.
 */
import { QueryTypes, Sequelize } from 'sequelize';
import * as m001 from '../../migrations/001_core';
import * as m002 from '../../migrations/002_user';
import * as m003 from '../../migrations/003_uniqueness';

// A database of its own (named like the worker's, so a killed run's teardown drops it too).
const server = new URL(process.env.DATABASE_URL!);
const dbName = `${server.pathname.slice(1)}9003`;

let admin: Sequelize;
let db: Sequelize;

const select = <T extends object>(sql: string) => db.query<T>(sql, { type: QueryTypes.SELECT });
/** The database's message for a statement it refuses. */
const refusal = (sql: string) => db.query(sql).then(() => 'accepted', (err) => String(err.parent?.sqlMessage ?? err.message));
const connect = (database?: string) => new Sequelize({
  dialect: 'mariadb', host: server.hostname, port: Number(server.port || 3306), username: decodeURIComponent(server.username || 'root'),
  password: decodeURIComponent(server.password), database, logging: false,
});

beforeAll(async () => {
  admin = connect();
  await admin.query(`DROP DATABASE IF EXISTS \`${dbName}\``);
  await admin.query(`CREATE DATABASE \`${dbName}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
  db = connect(dbName);
  await m001.up(db.getQueryInterface());
  await m002.up(db.getQueryInterface());

  const t = 1700000000;
  const insert = (table: string, rows: Array<Record<string, unknown>>) =>
    db.getQueryInterface().bulkInsert(table, rows.map((r) => ({ created_at: t, updated_at: t, ...r })));
  await insert('brands', [{ id: 1, name: 'One' }, { id: 2, name: 'Two' }]);
  await insert('users', [
    { id: 1, type: 'user', brand_id: 1, email: 'Alice@Example.com' },
    { id: 2, type: 'user', brand_id: 1, email: 'bob@example.com' },
    { id: 3, type: 'user', brand_id: 2, email: 'alice@example.com' },
    { id: 4, type: 'operator', brand_id: null, email: 'alice@example.com' },
    { id: 5, type: 'user', brand_id: 1, email: 'carol@example.com' },
  ]);
  await insert('user_emails', [
    { id: 1, user_id: 2, email: 'shared@example.com' },
    { id: 2, user_id: 5, email: 'shared@example.com' }, // a second holder in brand 1: dropped
    { id: 3, user_id: 5, email: 'alice@example.com' }, // user 1's main address: dropped
    { id: 4, user_id: 2, email: 'Extra@Example.com' },
    { id: 5, user_id: 3, email: 'shared@example.com' }, // brand 2: kept
  ]);
  await insert('organisations', [{ id: 1, brand_id: 1, name: 'A' }, { id: 2, brand_id: 1, name: 'B' }, { id: 3, brand_id: 2, name: 'C' }]);
  await insert('organisation_domains', [
    { id: 1, organisation_id: 1, domain: 'acme.example' },
    { id: 2, organisation_id: 2, domain: 'ACME.example' }, // claimed by organisation 1 first: dropped
    { id: 3, organisation_id: 2, domain: 'beta.example' },
    { id: 4, organisation_id: 3, domain: 'acme.example' }, // brand 2: kept
  ]);

  await m003.up(db.getQueryInterface());
});

afterAll(async () => {
  await db?.close();
  await admin?.query(`DROP DATABASE IF EXISTS \`${dbName}\``);
  await admin?.close();
});

describe('003_uniqueness up', () => {
  it('lower-cases stored addresses and domains and compares them exactly', async () => {
    expect(await select('SELECT id, email FROM users ORDER BY id')).toEqual([
      { id: 1, email: 'alice@example.com' }, { id: 2, email: 'bob@example.com' }, { id: 3, email: 'alice@example.com' },
      { id: 4, email: 'alice@example.com' }, { id: 5, email: 'carol@example.com' },
    ]);
    const collations = await select<{ t: string; c: string; collation: string }>(
      `SELECT TABLE_NAME AS t, COLUMN_NAME AS c, COLLATION_NAME AS collation FROM information_schema.COLUMNS
       WHERE TABLE_SCHEMA = DATABASE() AND (TABLE_NAME, COLUMN_NAME) IN
       (('users', 'email'), ('user_emails', 'email'), ('person_emails', 'email'), ('organisation_domains', 'domain'), ('department_emails', 'address'), ('brands', 'default_email'))
       ORDER BY t, c`,
    );
    expect(collations).toHaveLength(6);
    for (const row of collations) expect(row.collation).toBe('utf8mb4_bin');
    expect(await select("SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'users' AND COLUMN_NAME = 'email_key'")).toEqual([]);
  });

  it('claims every address once per scope; the additional emails of lost races are dropped', async () => {
    expect(await select('SELECT id, user_id, email FROM user_emails ORDER BY id')).toEqual([
      { id: 1, user_id: 2, email: 'shared@example.com' }, { id: 4, user_id: 2, email: 'extra@example.com' }, { id: 5, user_id: 3, email: 'shared@example.com' },
    ]);
    expect(await select('SELECT user_id, user_email_id, scope, email FROM person_emails ORDER BY user_id, user_email_id')).toEqual([
      { user_id: 1, user_email_id: null, scope: 'brand:1', email: 'alice@example.com' },
      { user_id: 2, user_email_id: null, scope: 'brand:1', email: 'bob@example.com' },
      { user_id: 2, user_email_id: 1, scope: 'brand:1', email: 'shared@example.com' },
      { user_id: 2, user_email_id: 4, scope: 'brand:1', email: 'extra@example.com' },
      { user_id: 3, user_email_id: null, scope: 'brand:2', email: 'alice@example.com' },
      { user_id: 3, user_email_id: 5, scope: 'brand:2', email: 'shared@example.com' },
      { user_id: 4, user_email_id: null, scope: 'operator', email: 'alice@example.com' },
      { user_id: 5, user_email_id: null, scope: 'brand:1', email: 'carol@example.com' },
    ]);
  });

  it('gives domains their brand, drops the second claim in a brand, and holds the rule', async () => {
    expect(await select('SELECT id, organisation_id, brand_id, domain FROM organisation_domains ORDER BY id')).toEqual([
      { id: 1, organisation_id: 1, brand_id: 1, domain: 'acme.example' },
      { id: 3, organisation_id: 2, brand_id: 1, domain: 'beta.example' },
      { id: 4, organisation_id: 3, brand_id: 2, domain: 'acme.example' },
    ]);
    expect(await refusal("INSERT INTO organisation_domains (organisation_id, brand_id, domain, created_at, updated_at) VALUES (2, 1, 'acme.example', 0, 0)"))
      .toBe("Duplicate entry 'acme.example-1' for key 'organisation_domains_domain_brand'");
    // A brand change of the organisation carries its domains.
    await db.query('UPDATE organisations SET brand_id = 2 WHERE id = 2');
    expect(await select('SELECT brand_id FROM organisation_domains WHERE organisation_id = 2')).toEqual([{ brand_id: 2 }]);
  });

  it('the triggers claim new addresses from now on', async () => {
    expect(await refusal("INSERT INTO users (type, brand_id, email, created_at, updated_at) VALUES ('user', 1, 'shared@example.com', 0, 0)"))
      .toBe("Duplicate entry 'shared@example.com-brand:1' for key 'person_emails_email_scope'");
    expect(await refusal("INSERT INTO user_emails (user_id, email, created_at, updated_at) VALUES (5, 'bob@example.com', 0, 0)"))
      .toBe("Duplicate entry 'bob@example.com-brand:1' for key 'person_emails_email_scope'");
    await db.query("INSERT INTO users (type, brand_id, email, created_at, updated_at) VALUES ('user', 1, 'alicé@example.com', 0, 0)");
    await db.query('DELETE FROM users WHERE id = 2');
    await db.query("INSERT INTO user_emails (user_id, email, created_at, updated_at) VALUES (5, 'bob@example.com', 0, 0)");
    expect(await select("SELECT user_id FROM person_emails WHERE email IN ('bob@example.com', 'shared@example.com') AND scope = 'brand:1'")).toEqual([{ user_id: 5 }]);
  });
});

describe('003_uniqueness down', () => {
  it('gives 002\'s schema back, and up runs again', async () => {
    // Addresses that only accents tell apart cannot go back to the accent-blind key.
    await db.query("DELETE FROM users WHERE email = 'alicé@example.com'");
    await m003.down(db.getQueryInterface());
    const tables = (await select<{ t: string }>('SELECT TABLE_NAME AS t FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()')).map((r) => r.t);
    expect(tables).not.toContain('person_emails');
    expect(await select("SELECT COLLATION_NAME AS c FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'users' AND COLUMN_NAME = 'email'"))
      .toEqual([{ c: 'utf8mb4_unicode_ci' }]);
    expect(await select("SELECT COUNT(*) AS n FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'organisation_domains' AND COLUMN_NAME = 'brand_id'"))
      .toEqual([{ n: 0 }]);
    expect(await select('SELECT COUNT(*) AS n FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE()')).toEqual([{ n: 0 }]);
    await m003.up(db.getQueryInterface());
    expect(await select("SELECT COUNT(*) AS n FROM person_emails WHERE scope = 'brand:1'")).toEqual([{ n: 3 }]);
  });
});
