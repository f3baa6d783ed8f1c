import { DatabaseError, type Transaction } from 'sequelize';
import { IpBan } from '../../src/db/models';
import { observeSelects, select } from '../../src/db/select';
import { transaction } from '../../src/db/transaction';
import { countQueries, sequelize } from '../../src/db/sequelize';
import { config } from '../../src/config';
import { useApi } from '../helpers/app';
import { uniqueIpv4 } from './support';
import { hasFastProperties } from '../helpers/v8Shape';

// The database the suite prepares (migrations) comes with the app.
useApi();

const ip = uniqueIpv4();
let ids: number[] = [];

beforeAll(async () => {
  const bans = await IpBan.bulkCreate([0, 1, 2].map((i) => ({ ip, type: i % 2, event_api: 0, reason: `it's: ${i}` })));
  ids = bans.map((b) => b.id);
});

describe('select (SELECTs on the driver)', () => {
  it('binds a list for IN (?) and values in order, and returns plain rows', async () => {
    const rows = await select<{ id: number; reason: string }>('SELECT id, reason FROM ip_bans WHERE id IN (?) AND ip = ? ORDER BY id', [ids, ip]);
    expect(rows).toEqual(ids.map((id, i) => ({ id, reason: `it's: ${i}` })));
    expect(Object.getPrototypeOf(rows[0])).toBe(Object.prototype);
  });

  it('binds :name placeholders, and leaves colons in quoted text and comments alone', async () => {
    const rows = await select<{ id: number; note: string }>(
      "SELECT id, ':ip' AS note FROM ip_bans /* :type */ WHERE ip = :ip AND id IN (:ids) AND reason LIKE :like ORDER BY id DESC",
      { ip, ids: ids.slice(1), like: "it's: %" },
    );
    expect(rows).toEqual([{ id: ids[2], note: ':ip' }, { id: ids[1], note: ':ip' }]);
  });

  it('never puts a value into the SQL text: a quote in a value is a value', async () => {
    const rows = await select('SELECT id FROM ip_bans WHERE ip = ?', [`${ip}' OR '1'='1`]);
    expect(rows).toEqual([]);
  });

  it('is counted by countQueries, as Sequelize statements are', async () => {
    const { queries } = await countQueries(() => select('SELECT id FROM ip_bans WHERE id = ?', [ids[0]]));
    expect(queries).toHaveLength(1);
    expect(queries[0]).toContain('SELECT id FROM ip_bans WHERE id = ?');
  });

  it("fails with Sequelize's error classes, carrying the statement", async () => {
    const err = await select('SELECT nothing FROM no_such_table_here').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DatabaseError);
    expect((err as DatabaseError).sql).toBe('SELECT nothing FROM no_such_table_here');
    expect(String((err as DatabaseError).message)).toMatch(/no_such_table_here/);
  });

  it('gives its connection back after a failure: more failures than the pool holds, then a read', async () => {
    const failures = Array.from({ length: config().database.poolMax + 3 }, () => select('SELECT nothing FROM no_such_table_here').catch(() => 'failed'));
    expect(await Promise.all(failures)).toEqual(failures.map(() => 'failed'));
    expect(await select<{ n: number }>('SELECT 1 AS n')).toEqual([{ n: 1 }]);
  });

  it("reads inside a transaction on the transaction's connection (its own uncommitted rows), outside on another", async () => {
    const t = await sequelize().transaction();
    try {
      const ban = await IpBan.create({ ip, type: 1, event_api: 0, reason: 'uncommitted' }, { transaction: t });
      expect(await select('SELECT reason FROM ip_bans WHERE id = :id', { id: ban.id }, { transaction: t })).toEqual([{ reason: 'uncommitted' }]);
      expect(await select('SELECT reason FROM ip_bans WHERE id = :id', { id: ban.id })).toEqual([]);
    } finally {
      await t.rollback();
    }
  });

  it("fails inside a transaction with Sequelize's error, and the transaction goes on", async () => {
    const t = await sequelize().transaction();
    try {
      const [first] = await select<{ id: number }>('INSERT INTO ip_bans (ip, type, event_api, reason, created_at, updated_at) VALUES (?, 1, 0, ?, 0, 0) RETURNING id', [uniqueIpv4(), 'in t'], { transaction: t });
      const err = await select('SELECT nothing FROM no_such_table_here', [], { transaction: t }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DatabaseError);
      expect(await select('SELECT reason FROM ip_bans WHERE id = ?', [first.id], { transaction: t })).toEqual([{ reason: 'in t' }]);
    } finally {
      await t.rollback();
    }
  });

  it('refuses a statement in a finished transaction, as Sequelize does', async () => {
    const t = await sequelize().transaction();
    await t.commit();
    await expect(select('SELECT 1 AS n', [], { transaction: t })).rejects.toThrow(/commit has been called on this transaction/);
  });

  it('a deadlock marks its transaction rolled back: a later statement of it is refused, never run outside it', async () => {
    const [a, b] = ids;
    const t1 = await sequelize().transaction();
    const t2 = await sequelize().transaction();
    try {
      const lock = (id: number, t: Transaction) => select('SELECT id FROM ip_bans WHERE id = ? FOR UPDATE', [id], { transaction: t });
      await lock(a, t1);
      await lock(b, t2);
      // Each waits for the other's row: whichever waits second closes the cycle, and InnoDB picks a victim.
      const outcomes = await Promise.all([lock(b, t1).then(() => null, (e: unknown) => e), lock(a, t2).then(() => null, (e: unknown) => e)]);
      const failed = outcomes.findIndex((e) => e !== null);
      expect(failed).toBeGreaterThanOrEqual(0);
      expect(outcomes.filter((e) => e !== null)).toHaveLength(1);
      const err = outcomes[failed] as DatabaseError & { parent?: { errno?: number } };
      expect(err).toBeInstanceOf(DatabaseError);
      expect(err.parent?.errno).toBe(1213);
      const victim = failed === 0 ? t1 : t2;
      expect((victim as unknown as { finished?: string }).finished).toBe('rollback');
      await expect(select('SELECT 1 AS n', [], { transaction: victim })).rejects.toThrow(/rollback has been called on this transaction/);
    } finally {
      for (const t of [t1, t2]) if (!(t as unknown as { finished?: string }).finished) await t.rollback();
    }
  });
});

describe('the rows select returns (src/db/rowObjects.ts)', () => {
  /** 30 columns: more than V8 keeps in a compact shape when the driver adds them one by one. */
  const wide = Array.from({ length: 27 }, (_, i) => `${i % 3 ? i : `'v${i}'`} AS c${i}`).join(', ');

  it('are plain objects of a compact shape, with the values the driver read, however wide the row', async () => {
    for (const binary of [false, true]) {
      const rows = await select<Record<string, unknown>>(`SELECT id, reason, ip, ${wide} FROM ip_bans WHERE id IN (?, ?) ORDER BY id`, [ids[0], ids[1]], { binary });
      expect(rows).toHaveLength(2);
      rows.forEach((row, n) => {
        expect(Object.keys(row)).toEqual(['id', 'reason', 'ip', ...Array.from({ length: 27 }, (_, i) => `c${i}`)]);
        expect(row).toMatchObject({ id: ids[n], reason: `it's: ${n}`, ip, c0: 'v0', c1: 1, c2: 2, c3: 'v3', c26: 26 });
        expect(Object.getPrototypeOf(row)).toBe(Object.prototype);
        expect(hasFastProperties(row)).toBe(true);
      });
    }
  });

  it('refuse a result with two columns of one name, as the driver does', async () => {
    const err = await select(`SELECT id, reason AS id FROM ip_bans WHERE id = ?`, [ids[0]]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DatabaseError);
    expect(String((err as Error).message)).toMatch(/duplicate field name `id`/);
  });

  it("take a column named __proto__ as a value, never as the row's prototype", async () => {
    const [row] = await select<Record<string, unknown>>("SELECT id, 'x' AS `__proto__` FROM ip_bans WHERE id = ?", [ids[0]]);
    expect(Object.getPrototypeOf(row)).toBe(Object.prototype);
    expect(row.id).toBe(ids[0]);
    expect(Object.getOwnPropertyDescriptor(row, '__proto__')?.value).toBe('x');
  });

  it('an UPDATE answers its count as before, not rows', async () => {
    const result = (await select('UPDATE ip_bans SET reason = reason WHERE id IN (?)', [ids])) as unknown as { affectedRows: number };
    expect(Array.isArray(result)).toBe(false);
    expect(Number(result.affectedRows)).toBe(0);
  });
});

describe("a transaction's own statements (START TRANSACTION, COMMIT, ROLLBACK) on the driver", () => {
  /** The statements `work` sends on the driver's path (select's observer), of its transactions only. */
  async function onDriver(work: () => Promise<unknown>): Promise<string[]> {
    const seen: string[] = [];
    observeSelects({ started: (sql, _values, t) => { if (t) seen.push(sql); }, finished: () => undefined });
    try {
      await work();
    } finally {
      observeSelects(null);
    }
    return seen;
  }
  const reasonsOf = async (reason: string) => (await IpBan.findAll({ where: { reason } })).map((b) => b.reason);

  it('commits, as countQueries counts it', async () => {
    const reason = `committed ${uniqueIpv4()}`;
    let queries: string[] = [];
    const seen = await onDriver(async () => {
      ({ queries } = await countQueries(() => transaction((t) => IpBan.create({ ip: uniqueIpv4(), type: 1, event_api: 0, reason }, { transaction: t }))));
    });
    expect(seen).toEqual(['START TRANSACTION;', 'COMMIT;']);
    expect(queries[0]).toMatch(/^Executing \(.+\): START TRANSACTION;$/);
    expect(queries[queries.length - 1]).toMatch(/^Executing \(.+\): COMMIT;$/);
    expect(await reasonsOf(reason)).toEqual([reason]);
  });

  it('rolls back work that failed, and a savepoint (Sequelize\'s path) inside it as before', async () => {
    const reason = `rolled back ${uniqueIpv4()}`;
    const kept = `kept ${uniqueIpv4()}`;
    const seen = await onDriver(async () => {
      await expect(transaction(async (t) => {
        await IpBan.create({ ip: uniqueIpv4(), type: 1, event_api: 0, reason }, { transaction: t });
        throw new Error('the work failed');
      })).rejects.toThrow('the work failed');
      // A savepoint rolled back, its transaction committed: only the outer row stays.
      await transaction(async (t) => {
        await IpBan.create({ ip: uniqueIpv4(), type: 1, event_api: 0, reason: kept }, { transaction: t });
        await sequelize().transaction({ transaction: t }, async (sp) => {
          await IpBan.create({ ip: uniqueIpv4(), type: 1, event_api: 0, reason: kept }, { transaction: sp });
          throw new Error('the savepoint failed');
        }).catch(() => undefined);
      });
    });
    expect(seen).toEqual(['START TRANSACTION;', 'ROLLBACK;', 'START TRANSACTION;', 'COMMIT;']);
    expect(await reasonsOf(reason)).toEqual([]);
    expect(await reasonsOf(kept)).toEqual([kept]);
  });

  it('fails a COMMIT whose connection was lost, destroys that connection, and the pool goes on', async () => {
    const reason = `lost ${uniqueIpv4()}`;
    const err = await transaction(async (t) => {
      await IpBan.create({ ip: uniqueIpv4(), type: 1, event_api: 0, reason }, { transaction: t });
      const [{ id }] = await select<{ id: number }>('SELECT CONNECTION_ID() AS id', [], { transaction: t });
      await select('KILL CONNECTION ?', [id]);
    }, 1).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(await reasonsOf(reason)).toEqual([]);
    // Every connection of the pool answers (the lost one was not handed back).
    const reads = Array.from({ length: config().database.poolMax + 2 }, () => select<{ n: number }>('SELECT 1 AS n'));
    expect(await Promise.all(reads)).toEqual(reads.map(() => [{ n: 1 }]));
  });
});
