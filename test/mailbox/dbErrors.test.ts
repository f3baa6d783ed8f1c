/**
 * How the mailbox worker sorts database errors (src/mailbox/dbErrors.ts), on errors the real
 * MariaDB and driver give: a deadlock, a lock wait timeout, a killed connection, a refused
 * connection and a pool with no connection to give in time are transient (the poll fails and the
 * mail is taken again); a missing table, a duplicate key and a value too long are the mail's
 * (recorded as its `error`). What is said of them never carries the SQL statement.
 */
import { QueryTypes, Sequelize, type Transaction } from 'sequelize';
import { config } from '../../src/config';
import { sequelize } from '../../src/db/sequelize';
import { errorText, isLockConflict, isTransientDbError } from '../../src/db/errors';
import { freePort } from '../helpers/ports';
import { unique, useApi } from '../helpers/app';

const table = `fixture_${unique('dbe').replace(/[^a-z0-9]/gi, '_')}`;
// Before useApi: jest runs afterAll hooks in the order they were added, and useApi's closes the database.
afterAll(() => sequelize().query(`DROP TABLE IF EXISTS ${table}`));
useApi();

beforeAll(async () => {
  await sequelize().query(`CREATE TABLE ${table} (id INT PRIMARY KEY, s VARCHAR(3)) ENGINE=InnoDB`);
  await sequelize().query(`INSERT INTO ${table} (id, s) VALUES (1, 'a'), (2, 'b')`);
});

/** What `work` rejects with (it must reject). */
async function failure(work: () => Promise<unknown>): Promise<Error> {
  try {
    await work();
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a failure');
}

const lock = (id: number, t: Transaction, nowait = false) =>
  sequelize().query(`SELECT id FROM ${table} WHERE id = ? FOR UPDATE${nowait ? ' NOWAIT' : ''}`, { replacements: [id], transaction: t, type: QueryTypes.SELECT });

/** A Sequelize of its own on the test database (the pool options given). */
const ownSequelize = (options: { port?: number; pool?: object } = {}) => {
  const db = config().database;
  return new Sequelize(db.name, db.user, db.password, {
    dialect: 'mariadb', host: db.host, port: options.port ?? db.port, logging: false,
    pool: { max: 1, min: 0, acquire: 500, ...options.pool }, dialectOptions: { connectTimeout: 1000 },
  });
};

describe('transient', () => {
  it('a deadlock', async () => {
    const [a, b] = [await sequelize().transaction(), await sequelize().transaction()];
    try {
      await lock(1, a);
      await lock(2, b);
      // Each waits for the other: InnoDB rolls one back at once.
      const outcomes = await Promise.allSettled([lock(2, a), lock(1, b)]);
      const [victim] = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason as Error] : []));
      expect(victim).toBeDefined();
      expect(isTransientDbError(victim)).toBe(true);
      expect(isLockConflict(victim)).toBe(true);
      expect(errorText(victim)).toBe('Deadlock found when trying to get lock; try restarting transaction (ER_LOCK_DEADLOCK)');
    } finally {
      await a.rollback().catch(() => undefined);
      await b.rollback().catch(() => undefined);
    }
  });

  it('a lock wait timeout', async () => {
    const [a, b] = [await sequelize().transaction(), await sequelize().transaction()];
    try {
      await lock(1, a);
      const err = await failure(() => lock(1, b, true));
      expect(isTransientDbError(err)).toBe(true);
      expect(isLockConflict(err)).toBe(true);
      expect(errorText(err)).toBe('Lock wait timeout exceeded; try restarting transaction (ER_LOCK_WAIT_TIMEOUT)');
    } finally {
      await a.rollback();
      await b.rollback();
    }
  });

  it('a connection killed under a transaction', async () => {
    const t = await sequelize().transaction();
    try {
      const [{ id }] = await sequelize().query<{ id: number }>('SELECT CONNECTION_ID() AS id', { transaction: t, type: QueryTypes.SELECT });
      await sequelize().query(`KILL ${Number(id)}`);
      const err = await failure(() => lock(1, t));
      expect(isTransientDbError(err)).toBe(true);
      // An outage, not a lock conflict (the API's 503 says the database is not answering).
      expect(isLockConflict(err)).toBe(false);
      expect(errorText(err)).not.toMatch(/SELECT|sql:/);
    } finally {
      await t.rollback().catch(() => undefined);
    }
  });

  it('a refused connection', async () => {
    const refused = ownSequelize({ port: await freePort() });
    try {
      const err = await failure(() => refused.query('SELECT 1'));
      expect(isTransientDbError(err)).toBe(true);
    } finally {
      await refused.close();
    }
  });

  it('no pooled connection within the acquire timeout', async () => {
    const small = ownSequelize();
    const held = await small.transaction();
    try {
      const err = await failure(() => small.query('SELECT 1'));
      expect(err.name).toBe('SequelizeConnectionAcquireTimeoutError');
      expect(isTransientDbError(err)).toBe(true);
    } finally {
      await held.rollback();
      await small.close();
    }
  });
});

describe("the mail's", () => {
  it.each([
    ['a missing table', `SELECT id FROM ${table}_missing`, /^Table '\w+\.\w+_missing' doesn't exist \(ER_NO_SUCH_TABLE\)$/],
    ['a duplicate key', `INSERT INTO ${table} (id, s) VALUES (1, 'x')`, /^Duplicate entry '1' for key 'PRIMARY' \(ER_DUP_ENTRY\)$/],
    ['a value too long', `INSERT INTO ${table} (id, s) VALUES (3, 'too long')`, /^Data too long for column 's' at row 1 \(ER_DATA_TOO_LONG\)$/],
  ])('%s', async (_, sql, said) => {
    const err = await failure(() => sequelize().query(sql));
    expect(isTransientDbError(err)).toBe(false);
    // The server's words and the code, without the statement (which Sequelize's message ends with).
    expect(errorText(err)).toMatch(said);
  });
});
