/**
 * Migration 025 (`tickets.assigned`, a counted column of the list) on data written before it:
 * tickets with and without assignees, trashed and merged ones. `up` sets the flags from the
 * assignee rows, counts them, and its triggers keep both; `down` gives 018's counters, indexes and
 * triggers back (counts still exact); `up` again works.
 */
import { QueryTypes, Sequelize } from 'sequelize';
import { migrations } from '../../migrations';
import * as m018 from '../../migrations/018_ticket_list_indexes';
import * as m025 from '../../migrations/025_ticket_list_assigned';

// A database of its own (named like the worker's, so a killed run's teardown drops it too).
const server = new URL(process.env.DATABASE_URL!);
const dbName = `${server.pathname.slice(1)}9025`;

let admin: Sequelize;
let db: Sequelize;

const select = <T extends object>(sql: string, replacements: unknown[] = []) => db.query<T>(sql, { replacements, type: QueryTypes.SELECT });
const connect = (database?: string) => new Sequelize({
  dialect: 'mariadb', host: server.hostname, port: Number(server.port || 3306), username: decodeURIComponent(server.username || 'root'),
  password: decodeURIComponent(server.password), database, logging: false,
});
const idOf = async (table: string, name: string) => (await select<{ id: number }>(`SELECT id FROM ${table} WHERE name = ?`, [name]))[0].id;

let ids: { brand: number; dept: number; channel: number; status: number; priority: number; user: number; ops: number[] };
const ticket = async (n: number, extra: Record<string, unknown> = {}) => {
  const t = 1700000000;
  const row = {
    number: `M${n}`, department_id: ids.dept, brand_id: ids.brand, channel_id: ids.channel, user_id: ids.user, status_id: ids.status,
    priority_id: ids.priority, subject: `Ticket ${n}`, token: `tok${n}`, created_at: t, updated_at: t, ...extra,
  };
  await db.query(`INSERT INTO tickets (${Object.keys(row).join(', ')}) VALUES (${Object.keys(row).map(() => '?').join(', ')})`, { replacements: Object.values(row) });
  return (await select<{ id: number }>('SELECT id FROM tickets WHERE number = ?', [`M${n}`]))[0].id;
};

/** Listed tickets without and with assignees, by the rows, and what the counters say. */
async function counts() {
  const [truth] = await select<{ none: number; some: number; trashed: number }>(`SELECT
      SUM(deleted_at IS NULL AND NOT EXISTS (SELECT 1 FROM ticket_assignees a WHERE a.ticket_id = t.id)) AS none,
      SUM(deleted_at IS NULL AND EXISTS (SELECT 1 FROM ticket_assignees a WHERE a.ticket_id = t.id)) AS some,
      SUM(deleted_at IS NOT NULL) AS trashed
    FROM tickets t WHERE merged_into_id IS NULL`);
  const [counted] = await select<{ listed: number; trashed: number }>('SELECT SUM(IF(state = 0, n, 0)) AS listed, SUM(IF(state = 1, n, 0)) AS trashed FROM ticket_list_counts');
  return { truth: { none: Number(truth.none), some: Number(truth.some), trashed: Number(truth.trashed) }, counted: { listed: Number(counted.listed), trashed: Number(counted.trashed) } };
}
const unassignedCounted = async () => Number((await select<{ n: number }>('SELECT SUM(n) AS n FROM ticket_list_counts WHERE state = 0 AND assigned = 0'))[0].n);
const columnsOf = async (table: string) => (await select<{ c: string }>(
  'SELECT COLUMN_NAME AS c FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION', [dbName, table])).map((r) => r.c);
const indexColumns = async (index: string) => (await select<{ c: string }>(
  "SELECT COLUMN_NAME AS c FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = 'tickets' AND INDEX_NAME = ? ORDER BY SEQ_IN_INDEX", [dbName, index])).map((r) => r.c);
const triggers = async () => (await select<{ t: string }>('SELECT TRIGGER_NAME AS t FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = ? ORDER BY TRIGGER_NAME', [dbName])).map((r) => r.t);

beforeAll(async () => {
  admin = connect();
  await admin.query(`DROP DATABASE IF EXISTS \`${dbName}\``);
  await admin.query(`CREATE DATABASE \`${dbName}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
  db = connect(dbName);
  const before = migrations.slice(0, migrations.findIndex((m) => m.name === m025.name));
  for (const m of before) await m.up(db.getQueryInterface());
  const t = 1700000000;
  for (const table of ['brands', 'departments', 'channels', 'ticket_statuses', 'ticket_priorities']) {
    await db.query(`INSERT INTO ${table} (name, created_at, updated_at) VALUES (?, ?, ?)`, { replacements: [`m025 ${table}`, t, t] });
  }
  for (const [type, email] of [['user', 'u@m025.example'], ['operator', 'o1@m025.example'], ['operator', 'o2@m025.example']]) {
    await db.query('INSERT INTO users (type, email, brand_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?)', {
      replacements: [type, email, type === 'user' ? await idOf('brands', 'm025 brands') : null, t, t],
    });
  }
  const user = async (email: string) => (await select<{ id: number }>('SELECT id FROM users WHERE email = ?', [email]))[0].id;
  ids = {
    brand: await idOf('brands', 'm025 brands'), dept: await idOf('departments', 'm025 departments'), channel: await idOf('channels', 'm025 channels'),
    status: await idOf('ticket_statuses', 'm025 ticket_statuses'), priority: await idOf('ticket_priorities', 'm025 ticket_priorities'),
    user: await user('u@m025.example'), ops: [await user('o1@m025.example'), await user('o2@m025.example')],
  };
}, 120_000);

afterAll(async () => {
  await db?.close();
  await admin?.query(`DROP DATABASE IF EXISTS \`${dbName}\``);
  await admin?.close();
});

test('up sets the flags and counts from the assignee rows; its triggers keep them; down gives 018 back; up again', async () => {
  // Written under 024: two assigned (one twice), two not, one trashed and assigned, one merged.
  const [a, b, c, d, e] = [await ticket(1), await ticket(2), await ticket(3), await ticket(4), await ticket(5, { deleted_at: 1700000100 })];
  const merged = await ticket(6);
  await db.query('UPDATE tickets SET merged = 1, merged_into_id = ? WHERE id = ?', { replacements: [a, merged] });
  const assign = (ticketId: number, userId: number) => db.query('INSERT INTO ticket_assignees (ticket_id, user_id) VALUES (?, ?)', { replacements: [ticketId, userId] });
  await assign(a, ids.ops[0]);
  await assign(b, ids.ops[0]);
  await assign(b, ids.ops[1]);
  await assign(e, ids.ops[1]);
  await assign(merged, ids.ops[1]);

  await m025.up(db.getQueryInterface());
  expect(await select('SELECT number, assigned FROM tickets ORDER BY id')).toEqual([
    { number: 'M1', assigned: 1 }, { number: 'M2', assigned: 1 }, { number: 'M3', assigned: 0 }, { number: 'M4', assigned: 0 },
    { number: 'M5', assigned: 1 }, { number: 'M6', assigned: 1 },
  ]);
  expect(await counts()).toEqual({ truth: { none: 2, some: 2, trashed: 1 }, counted: { listed: 4, trashed: 1 } });
  expect(await unassignedCounted()).toBe(2);
  expect(await columnsOf('ticket_list_counts')).toEqual(['state', ...m025.COUNTED, 'slot', 'n']);
  for (const [name, columns] of Object.entries(m025.listIndexes())) expect({ name, columns: await indexColumns(name) }).toEqual({ name, columns });
  expect(await triggers()).toEqual(expect.arrayContaining(['ticket_assignees_assigned_delete', 'ticket_assignees_assigned_insert', 'ticket_assignees_assigned_update']));

  // The triggers: assign c, unassign b (two rows, one statement), move a's row to d.
  await assign(c, ids.ops[1]);
  await db.query('DELETE FROM ticket_assignees WHERE ticket_id = ?', { replacements: [b] });
  await db.query('UPDATE ticket_assignees SET ticket_id = ? WHERE ticket_id = ?', { replacements: [d, a] });
  expect((await select<{ assigned: number }>('SELECT assigned FROM tickets WHERE id IN (?) ORDER BY id', [[a, b, c, d]])).map((r) => r.assigned)).toEqual([0, 0, 1, 1]);
  expect(await unassignedCounted()).toBe(2);
  expect((await counts()).truth).toEqual({ none: 2, some: 2, trashed: 1 });

  await m025.down(db.getQueryInterface());
  expect(await columnsOf('tickets')).not.toContain('assigned');
  expect(await columnsOf('ticket_list_counts')).toEqual(['state', ...m018.COUNTED, 'slot', 'n']);
  for (const [name, columns] of Object.entries(m018.listIndexes())) expect({ name, columns: await indexColumns(name) }).toEqual({ name, columns });
  expect(await indexColumns('tickets_filter_assigned')).toEqual([]);
  expect((await triggers()).filter((t) => t.startsWith('ticket_assignees_'))).toEqual([]);
  expect(await triggers()).toEqual(expect.arrayContaining(['tickets_list_counts_delete', 'tickets_list_counts_insert', 'tickets_list_counts_update']));
  expect((await counts()).counted).toEqual({ listed: 4, trashed: 1 });
  // 018's triggers count again (an assignee row moves nothing now).
  await ticket(7);
  await assign(a, ids.ops[0]);
  expect((await counts()).counted).toEqual({ listed: 5, trashed: 1 });

  await m025.up(db.getQueryInterface());
  expect(await unassignedCounted()).toBe(2); // b and the new one (a has its row again)
  expect(await counts()).toEqual({ truth: { none: 2, some: 3, trashed: 1 }, counted: { listed: 5, trashed: 1 } });
}, 120_000);
