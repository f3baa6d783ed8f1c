import * as mariadb from 'mariadb';
import { Umzug, SequelizeStorage } from 'umzug';
import { hostname } from 'node:os';
import { config, type Config } from '../config';
import type { QueryInterface } from 'sequelize';
import { migrations } from '../../migrations';
import { logger } from '../logger';
import type { Sequelize } from 'sequelize-typescript';
import { migrationSequelize, sequelize } from './sequelize';

export function migrator(s: Sequelize = sequelize()) {
  return new Umzug<QueryInterface>({
    migrations: migrations.map((m) => ({ name: m.name, up: ({ context }) => m.up(context), down: ({ context }) => m.down(context) })),
    context: s.getQueryInterface(),
    storage: new SequelizeStorage({ sequelize: s, tableName: 'migrations' }),
    logger: { info: (m) => logger.info(m), warn: (m) => logger.warn(m), error: (m) => logger.error(m), debug: (m) => logger.debug(m) },
  });
}

type Database = Config['database'];

/**
 * Applies every pending migration, one process at a time (see `locked`), then `after` (what is
 * made once the schema is: the seed) while the lock is still held.
 */
export async function migrate(db: Database = config().database, after?: () => Promise<void>): Promise<void> {
  await locked(db, async (m) => {
    await m.up();
    await after?.();
  });
}

/** Reverts the last applied migration, under the same lock; returns its name (undefined: none was applied). */
export async function revertLast(db: Database = config().database): Promise<string | undefined> {
  const [reverted] = await locked(db, (m) => m.down());
  return reverted?.name;
}

/**
 * The migrations applied (in the order they run; then any this code does not know, applied by a
 * newer release) and those pending, changing nothing: no database or no `migrations` table yet
 * means none is applied.
 */
export async function migrationStatus(db: Database = config().database): Promise<{ applied: string[]; pending: string[] }> {
  const c = await mariadb.createConnection({ host: db.host, port: db.port, user: db.user, password: db.password, connectTimeout: db.connectTimeoutMs });
  try {
    const [{ n }] = await c.query("SELECT COUNT(*) AS n FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = 'migrations'", [db.name]);
    const rows: Array<{ name: string }> = Number(n) ? await c.query(`SELECT name FROM \`${db.name}\`.migrations ORDER BY name`) : [];
    const done = new Set(rows.map((r) => r.name));
    const known = new Set(migrations.map((m) => m.name));
    return {
      applied: [...migrations.filter((m) => done.has(m.name)).map((m) => m.name), ...[...done].filter((name) => !known.has(name))],
      pending: migrations.filter((m) => !done.has(m.name)).map((m) => m.name),
    };
  } finally {
    await c.end();
  }
}

/**
 * Runs `work` on a migrator of its own connection (no statement timeout), one process at a time:
 * another waits for it up to `migrationLockWaitSeconds` (a first deploy's migrations take minutes
 * on a large database, and the processes started beside it must not give up before it is done).
 * The lock is held on a connection of its own (a pooled one could be handed back and keep it). On
 * a standalone server or a replication primary it is GET_LOCK, released by the server if the
 * process dies. On a Galera cluster GET_LOCK is only a lock of the node it is taken on (two
 * processes migrating through two nodes would both get it), so there the lock is a row of
 * `migration_lock`: its INSERT commits on one node only, the other's fails on the duplicate key
 * or in certification (a deadlock error).
 */
async function locked<T>(db: Database, work: (m: ReturnType<typeof migrator>) => Promise<T>): Promise<T> {
  const lock = await mariadb.createConnection({ host: db.host, port: db.port, user: db.user, password: db.password, database: db.name });
  try {
    const [{ cluster }] = await lock.query("SELECT @@wsrep_on AS cluster");
    const take = Number(cluster) === 1 ? clusterLock : serverLock;
    const release = await take(lock, db.name, db.migrationLockWaitSeconds);
    try {
      const s = migrationSequelize(db);
      try {
        return await work(migrator(s));
      } finally {
        await s.close();
      }
    } finally {
      await release();
    }
  } finally {
    await lock.end();
  }
}

const waiting = (holder: string, seconds: number) =>
  logger.info({ holder, waitSeconds: seconds }, 'another process is migrating this database; waiting for it to finish');
const notTaken = (seconds: number, held: string) =>
  new Error(`Could not take the migration lock within ${seconds} seconds: ${held} (DATABASE_MIGRATION_LOCK_WAIT_SECONDS)`);

async function serverLock(c: mariadb.Connection, name: string, seconds: number): Promise<() => Promise<void>> {
  const lockName = `migrate_${name}`;
  const take = async (wait: number) => Number((await c.query('SELECT GET_LOCK(?, ?) AS got', [lockName, wait]))[0]?.got) === 1;
  if (!(await take(0))) {
    const [{ holder }] = await c.query('SELECT IS_USED_LOCK(?) AS holder', [lockName]);
    waiting(`connection ${holder}`, seconds);
    if (!(await take(seconds))) throw notTaken(seconds, `another process holds it (a migration still running)`);
  }
  return async () => { await c.query('SELECT RELEASE_LOCK(?)', [lockName]); };
}

async function clusterLock(c: mariadb.Connection, name: string, seconds: number): Promise<() => Promise<void>> {
  await c.query(`CREATE TABLE IF NOT EXISTS migration_lock (
    name VARCHAR(64) NOT NULL PRIMARY KEY, holder VARCHAR(255) NOT NULL, taken_at INT UNSIGNED NOT NULL
  ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
  const holder = `${hostname()} pid ${process.pid}`;
  const heldBy = async () => {
    const [held] = await c.query('SELECT holder, taken_at FROM migration_lock WHERE name = ?', [name]);
    return held ? `held by ${held.holder} since ${new Date(Number(held.taken_at) * 1000).toISOString()}` : 'released just now';
  };
  const until = Date.now() + seconds * 1000;
  for (let attempt = 0; ; attempt++) {
    try {
      await c.query('INSERT INTO migration_lock (name, holder, taken_at) VALUES (?, ?, UNIX_TIMESTAMP())', [name, holder]);
      return async () => { await c.query('DELETE FROM migration_lock WHERE name = ? AND holder = ?', [name, holder]); };
    } catch (err: any) {
      // 1062: another process holds it; 1213: another node's INSERT won the certification.
      if (err?.errno !== 1062 && err?.errno !== 1213) throw err;
    }
    if (attempt === 0) waiting(await heldBy(), seconds);
    if (Date.now() > until) throw notTaken(seconds, `${await heldBy()} (if no migration is running, DELETE FROM migration_lock)`);
    await new Promise((r) => setTimeout(r, 200 + Math.random() * 300));
  }
}
