/**
 * A request whose transaction still meets a lock conflict after the in-process retries (a lock
 * wait timeout here; a deadlock or 1467 alike) answers 503 with Retry-After, saying the database
 * is busy with conflicting changes: it answered, so "not answering" (the sentence of an outage,
 * test/core/db-faults.test.ts) would send an operator after the wrong trouble. Found by a
 * black-box audit.
 */
import { QueryTypes, type Transaction } from 'sequelize';
import { Organisation } from '../../src/db/models';
import { sequelize } from '../../src/db/sequelize';
import { subscribe } from '../../src/events';
import { newEmail, unique, useApi } from '../helpers/app';
import { expectSuccess } from '../helpers/envelope';

const api = useApi();
const BUSY = unique('busy');
/** The row the test holds locked (in `holder`, a transaction of another connection) while the request needs it. */
let holder: Transaction | undefined;
let lockedRow = 0;
let unsubscribe: (() => void) | undefined;

beforeAll(async () => {
  lockedRow = expectSuccess(await api.post('/api/user/user', { email: newEmail() }), expect.any(String) as unknown as string).id;
  // Creating a marked organisation runs, in the request's transaction, a statement that meets the
  // row lock (NOWAIT: the lock wait timeout InnoDB gives after innodb_lock_wait_timeout, at once).
  unsubscribe = subscribe('organisation.created', async (p, t) => {
    const org = await Organisation.findByPk(p.organisationId, { attributes: ['id', 'name'], transaction: t });
    if (org?.name.includes(BUSY) && holder) {
      await sequelize().query('SELECT id FROM users WHERE id = ? FOR UPDATE NOWAIT', { replacements: [lockedRow], transaction: t, type: QueryTypes.SELECT });
    }
  });
});
afterAll(async () => {
  unsubscribe?.();
  await holder?.rollback();
});

it('answers 503 with Retry-After, the database busy with conflicting changes, when the lock wait outlasts the retries', async () => {
  holder = await sequelize().transaction();
  try {
    await sequelize().query('SELECT id FROM users WHERE id = ? FOR UPDATE', { replacements: [lockedRow], transaction: holder, type: QueryTypes.SELECT });
    const res = await api.post('/api/user/organisation', { name: `${BUSY} Ltd` });
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('5');
    expect(res.body).toEqual({
      status: 'error', message: 'The service is temporarily unavailable: the database is busy with conflicting changes. Try again in a few seconds.', data: null,
    });
    expect(await Organisation.count({ where: { name: `${BUSY} Ltd` } })).toBe(0);
  } finally {
    await holder.rollback();
    holder = undefined;
  }
  // The lock released, the same request goes through.
  expect((await api.post('/api/user/organisation', { name: `${BUSY} Ltd` })).status).toBe(200);
});
