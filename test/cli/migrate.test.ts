/**
 * `npm run migrate [-- up|down|status]`: status lists without changing anything, down reverts the
 * last migration, and any other argument gets the usage and exit code 2, touching nothing.
 */
import * as mariadb from 'mariadb';
import { config } from '../../src/config';
import { MIGRATE_USAGE, migrateCommand } from '../../src/cli/migrateCommand';
import { migrations } from '../../migrations';
import { migrate } from '../../src/db/migrator';

// A database of its own (named like the worker's, so a killed run's teardown drops it too).
const db = { ...config().database, name: `${config().database.name}9002` };
let conn: mariadb.Connection;

async function run(...argv: string[]) {
  let out = '';
  let err = '';
  const code = await migrateCommand(argv, { out: (t) => { out += t; }, err: (t) => { err += t; } }, db);
  return { code, out, err };
}

const databaseExists = async () => Number((await conn.query('SELECT COUNT(*) AS n FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?', [db.name]))[0].n) === 1;
const names = migrations.map((m) => m.name);
const statusOf = (applied: string[], pending: string[]) => [...applied.map((n) => `applied\t${n}\n`), ...pending.map((n) => `pending\t${n}\n`)].join('')
  + `${applied.length} applied, ${pending.length} pending.\n`;

beforeAll(async () => {
  conn = await mariadb.createConnection({ host: db.host, port: db.port, user: db.user, password: db.password });
  await conn.query(`DROP DATABASE IF EXISTS \`${db.name}\``);
});

afterAll(async () => {
  await conn?.query(`DROP DATABASE IF EXISTS \`${db.name}\``);
  await conn?.end();
});

describe('the migrate command', () => {
  it.each([
    ['downn', 'Unknown command: downn.'], ['--helpp', 'Unknown command: --helpp.'], ['status extra', 'Unexpected argument: extra.'], ['up down', 'Unexpected argument: down.'],
  ])('`%s`: named, with the usage, on stderr, exit 2, nothing created', async (args, message) => {
    expect(await run(...args.split(' '))).toEqual({ code: 2, out: '', err: `${message}\n${MIGRATE_USAGE}` });
    expect(await databaseExists()).toBe(false);
  });

  it.each(['--help', '-h', 'help'])('`%s`: the usage on stdout, exit 0, nothing created', async (arg) => {
    expect(await run(arg)).toEqual({ code: 0, out: MIGRATE_USAGE, err: '' });
    expect(await databaseExists()).toBe(false);
  });

  it('status lists every migration pending before the database exists, and creates nothing', async () => {
    expect(await run('status')).toEqual({ code: 0, out: statusOf([], names), err: '' });
    expect(await databaseExists()).toBe(false);
  });

  it('up (or no argument) applies them; status then lists them applied; down reverts the last one only', async () => {
    expect(await run('up')).toEqual({ code: 0, out: `Applied ${names.length} migrations: ${names.join(', ')}.\nMigrations applied: ${names.length}\n`, err: '' });
    expect(await run()).toEqual({ code: 0, out: `Nothing to apply: the database is up to date.\nMigrations applied: ${names.length}\n`, err: '' });
    expect(await run('status')).toEqual({ code: 0, out: statusOf(names, []), err: '' });

    const last = names[names.length - 1];
    expect(await run('down')).toEqual({ code: 0, out: `Reverted ${last}.\nMigrations applied: ${names.length - 1}\n`, err: '' });
    expect(await run('status')).toEqual({ code: 0, out: statusOf(names.slice(0, -1), [last]), err: '' });
    expect(await run()).toEqual({ code: 0, out: `Applied 1 migration: ${last}.\nMigrations applied: ${names.length}\n`, err: '' });
  });

  it('waits for another process\'s migration: gives up after DATABASE_MIGRATION_LOCK_WAIT_SECONDS, changing nothing, and goes on once it ends', async () => {
    const last = names[names.length - 1];
    expect((await run('down')).code).toBe(0);
    const lockName = `migrate_${db.name}`;
    expect(Number((await conn.query('SELECT GET_LOCK(?, 0) AS got', [lockName]))[0].got)).toBe(1); // another process migrating
    try {
      await expect(migrate({ ...db, migrationLockWaitSeconds: 1 })).rejects.toThrow('Could not take the migration lock within 1 seconds');
      expect(await run('status')).toEqual({ code: 0, out: statusOf(names.slice(0, -1), [last]), err: '' });

      let settled = false;
      const waiting = migrate({ ...db, migrationLockWaitSeconds: 600 }).finally(() => { settled = true; });
      // Released once the second migration is seen waiting for the lock (the server's process list).
      const waitingForLock = async () => Number((await conn.query(
        "SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE STATE = 'User lock' AND INFO LIKE CONCAT('%', ?, '%')", [lockName]))[0].n) === 1;
      while (!settled && !(await waitingForLock())) await new Promise((r) => setTimeout(r, 50));
      expect(settled).toBe(false);
      expect(await run('status')).toEqual({ code: 0, out: statusOf(names.slice(0, -1), [last]), err: '' });
      await conn.query('SELECT RELEASE_LOCK(?)', [lockName]);
      await waiting;
    } finally {
      await conn.query('SELECT RELEASE_LOCK(?)', [lockName]);
    }
    expect(await run('status')).toEqual({ code: 0, out: statusOf(names, []), err: '' });
  });
});
