/**
 * The export under a database user without the PROCESS privilege: it cannot see the open
 * transactions (information_schema.INNODB_TRX), so it holds back EXPORT_SETTLE_SECONDS only, as
 * before it could, and says so in the log once, not on every page.
 */
import { PASSWORD, ROOT_URL, USER } from './unprivilegedEnv';
import * as mariadb from 'mariadb';
import { QueryTypes } from 'sequelize';
import { sequelize } from '../../src/db/sequelize';
import { logger } from '../../src/logger';
import { nowSec, useApi } from '../helpers/app';
import { expectSuccess } from '../helpers/envelope';
import { waitFor } from '../helpers/smtp';
import { ticketContext, ticketFactories, type TicketContext } from '../ticket/ticketSupport';

const root = new URL(ROOT_URL);
const HOSTS = ['localhost', '127.0.0.1', '%'];
async function asRoot(statements: string[]): Promise<void> {
  const conn = await mariadb.createConnection({ host: root.hostname, port: Number(root.port || 3306), user: decodeURIComponent(root.username), password: decodeURIComponent(root.password) });
  try {
    for (const sql of statements) await conn.query(sql);
  } finally {
    await conn.end();
  }
}

// Before useApi's: the user exists when the app first connects.
beforeAll(async () => {
  const db = root.pathname.slice(1);
  await asRoot(HOSTS.flatMap((host) => [
    `CREATE USER IF NOT EXISTS '${USER}'@'${host}' IDENTIFIED BY '${PASSWORD}'`,
    `GRANT ALL PRIVILEGES ON \`${db}\`.* TO '${USER}'@'${host}'`,
  ]));
});
afterAll(async () => {
  await asRoot(HOSTS.map((host) => `DROP USER IF EXISTS '${USER}'@'${host}'`));
});

const api = useApi();
let ctx: TicketContext;
beforeAll(async () => {
  ctx = await ticketContext();
});
const f = ticketFactories(api, () => ctx);

it('holds back the settle seconds only, and says why in the log once', async () => {
  // The app's user really lacks the privilege.
  await expect(sequelize().query('SELECT COUNT(*) FROM information_schema.INNODB_TRX', { type: QueryTypes.SELECT }))
    .rejects.toMatchObject({ parent: expect.objectContaining({ errno: 1227 }) });
  const warn = jest.spyOn(logger, 'warn');
  const ticket = await f.ticket();
  for (let i = 0; i < 3; i++) {
    const before = nowSec();
    const page = expectSuccess(await api.get('/api/export/tickets', { start_time: ticket.updated_at }));
    // EXPORT_SETTLE_SECONDS is 2 (exportEnv.ts).
    expect(page.end_time).toBeGreaterThanOrEqual(before - 2);
    expect(page.end_time).toBeLessThanOrEqual(nowSec() - 2);
  }
  const said = warn.mock.calls.filter((call) => call.some((a) => typeof a === 'string' && /lacks the PROCESS privilege/.test(a)));
  expect(said).toHaveLength(1);
  // The ticket is exported once the settle seconds have passed.
  const later = await waitFor(async () => {
    const p = expectSuccess(await api.get('/api/export/tickets', { start_time: ticket.updated_at }));
    return p.records.some((r: any) => r.id === ticket.id) ? p : null;
  }, 10000, 'the ticket to be exported');
  expect(later.end_time).toBeGreaterThanOrEqual(ticket.updated_at);
});
