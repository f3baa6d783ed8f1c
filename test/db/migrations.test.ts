/**
 * Every migration reverts (`npm run migrate -- down`, one at a time, down to an empty schema) to
 * exactly the schema it was applied on, and `up` again gives the schema of a straight `up`.
 */
import * as mariadb from 'mariadb';
import { config } from '../../src/config';
import { migrate, migrator, revertLast } from '../../src/db/migrator';
import { migrationSequelize } from '../../src/db/sequelize';
import { migrations } from '../../migrations';

// A database of its own (named like the worker's, so a killed run's teardown drops it too).
const db = { ...config().database, name: `${config().database.name}9001` };
let conn: mariadb.Connection;

/**
 * A CREATE TABLE without what says nothing of the schema: the AUTO_INCREMENT counter, and the
 * order of indexes and constraints (an index dropped and added again comes last).
 */
function normalised(create: string): string {
  const lines = create.replace(/ AUTO_INCREMENT=\d+/, '').split('\n').map((l) => l.replace(/,$/, ''));
  const keyed = (l: string) => /^\s+(PRIMARY |UNIQUE |FULLTEXT |SPATIAL )?KEY |^\s+CONSTRAINT /.test(l);
  const columns = lines.filter((l) => !keyed(l));
  return [...columns.slice(0, -1), ...lines.filter(keyed).sort(), ...columns.slice(-1)].join('\n');
}

/** Tables (their CREATE TABLE, without the AUTO_INCREMENT counter) and triggers, but the migrations' own table. */
async function schema(): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const tables: Array<{ t: string }> = await conn.query(
    "SELECT TABLE_NAME AS t FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME <> 'migrations' ORDER BY t", [db.name]);
  for (const { t } of tables) {
    const [row] = await conn.query(`SHOW CREATE TABLE \`${db.name}\`.\`${t}\``);
    out[`table ${t}`] = normalised(String(row['Create Table']));
  }
  const triggers: Array<{ name: string; tbl: string; timing: string; event: string; body: string }> = await conn.query(`
    SELECT TRIGGER_NAME AS name, EVENT_OBJECT_TABLE AS tbl, ACTION_TIMING AS timing, EVENT_MANIPULATION AS event, ACTION_STATEMENT AS body
    FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = ? ORDER BY name`, [db.name]);
  for (const t of triggers) out[`trigger ${t.name}`] = `${t.timing} ${t.event} ON ${t.tbl}: ${t.body}`;
  return out;
}

/** Each foreign key's rule on the parent's update or delete, by table and name. */
async function foreignKeyRules(rule: 'UPDATE_RULE' | 'DELETE_RULE'): Promise<Record<string, string>> {
  const rows: Array<{ k: string; r: string }> = await conn.query(
    `SELECT CONCAT(TABLE_NAME, '.', CONSTRAINT_NAME) AS k, ${rule} AS r FROM information_schema.REFERENTIAL_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = ? ORDER BY k`, [db.name]);
  return Object.fromEntries(rows.map((x) => [x.k, x.r]));
}

const applied = async () => {
  const s = migrationSequelize(db);
  try {
    return (await migrator(s).executed()).map((m) => m.name);
  } finally {
    await s.close();
  }
};

beforeAll(async () => {
  conn = await mariadb.createConnection({ host: db.host, port: db.port, user: db.user, password: db.password });
  await conn.query(`DROP DATABASE IF EXISTS \`${db.name}\``);
  await conn.query(`CREATE DATABASE \`${db.name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
});

afterAll(async () => {
  await conn?.query(`DROP DATABASE IF EXISTS \`${db.name}\``);
  await conn?.end();
});

describe('the migrations, down to nothing and up again', () => {
  it('each down gives back the schema its up started from; up again is a straight up', async () => {
    // Straight up, one migration at a time: the schema before each.
    const before: Array<Record<string, string>> = [];
    const s = migrationSequelize(db);
    let deletesBefore099: unknown;
    try {
      for (let i = 0; i < migrations.length; i++) {
        before.push(await schema());
        if (migrations[i].name === '099_foreign_keys_update_restrict') deletesBefore099 = await foreignKeyRules('DELETE_RULE');
        await migrator(s).up({ step: 1 });
      }
    } finally {
      await s.close();
    }
    const straight = await schema();
    expect(await applied()).toEqual(migrations.map((m) => m.name));
    // No key to a primary key cascades an update (each made MariaDB open the child, with its
    // update triggers, for every UPDATE of the parent: migration 099); the key to another unique
    // key that changes still does (an organisation's domains follow its brand); deletes cascade as they did.
    expect(Object.entries(await foreignKeyRules('UPDATE_RULE')).filter(([, r]) => r === 'CASCADE').map(([k]) => k))
      .toEqual(['organisation_domains.organisation_domains_organisation_brand_fk', 'article_attachments.article_attachments_ibfk_2', 'ticket_attachments.ticket_attachments_ibfk_3'].sort());
    expect(await foreignKeyRules('DELETE_RULE')).toEqual(deletesBefore099);

    for (let i = migrations.length - 1; i >= 0; i--) {
      expect(await revertLast(db)).toBe(migrations[i].name);
      const after = await schema();
      try {
        expect(after).toEqual(before[i]);
      } catch (err) {
        (err as Error).message = `${migrations[i].name} down does not undo its up:\n${(err as Error).message}`;
        throw err;
      }
    }
    expect(await schema()).toEqual({});
    expect(await applied()).toEqual([]);
    expect(await revertLast(db)).toBeUndefined();

    await migrate(db);
    expect(await applied()).toEqual(migrations.map((m) => m.name));
    expect(await schema()).toEqual(straight);
  });
});
