/**
 * A write locks what it changes, not the help desk: while one transaction holds its change of a
 * ticket open (a status change, a person's or a tag's delete), another transaction's write of an
 * unrelated ticket goes through at once (innodb_lock_wait_timeout 0: refused at once where it
 * would wait). Found by a black-box audit under concurrent load: the operators' count triggers
 * (migration 029, replaced by 048) and a person's and a tag's delete ran UPDATEs with
 * `IN (SELECT ...)`, which MariaDB 10.11 runs as a scan locking every row of the counts or of
 * `tickets`; unrelated writes waited for each other, deadlocked, and ended in 503s.
 */
import { QueryTypes, type Transaction } from 'sequelize';
import { runAs } from '../../src/audit/actor';
import { TicketTag, User } from '../../src/db/models';
import { sequelize } from '../../src/db/sequelize';
import { transaction } from '../../src/db/transaction';
import { tagResource } from '../../src/ticket/tag';
import { deleteOperator } from '../../src/user/operators/service';
import { deleteUser } from '../../src/user/users/service';
import { unique, useApi } from '../helpers/app';
import { ticketContext, ticketFactories, type TicketContext } from './ticketSupport';

const api = useApi();
let ctx: TicketContext;
beforeAll(async () => { ctx = await ticketContext(); });
const f = ticketFactories(api, () => ctx);

/** Runs `sql` in a transaction of its own that may not wait for a lock: 'free', or 'locked' if it would have waited. */
async function tryWrite(sql: string, replacements: unknown[]): Promise<'free' | 'locked'> {
  try {
    await sequelize().transaction(async (t) => {
      await sequelize().query('SET SESSION innodb_lock_wait_timeout = 0', { transaction: t });
      try {
        await sequelize().query(sql, { replacements, transaction: t, type: QueryTypes.UPDATE });
      } finally {
        await sequelize().query('SET SESSION innodb_lock_wait_timeout = DEFAULT', { transaction: t });
      }
    });
    return 'free';
  } catch (err) {
    if (/Lock wait timeout/.test(String((err as Error)?.message))) return 'locked';
    throw err;
  }
}

/** Holds `change` open in a transaction (as the scheduler, the actor of a background change) while `check` runs beside it. */
const whileHeld = <T>(change: (t: Transaction) => Promise<unknown>, check: () => Promise<T>): Promise<T> =>
  runAs({ type: 'scheduler', id: null, channel: 'scheduler' }, () => transaction(async (t) => {
    await change(t);
    return check();
  }));

const setStatus = (id: number, status: number, t?: Transaction) =>
  sequelize().query('UPDATE tickets SET status_id = ? WHERE id = ?', { replacements: [status, id], transaction: t, type: QueryTypes.UPDATE });

/** Two tickets of different customers, operators and count slots (ids apart by 1 are in different slots). */
async function twoTickets(extra: (i: number) => Record<string, unknown>) {
  const a = await f.ticket(extra(0));
  let b = await f.ticket(extra(1));
  while ((b.id - a.id) % 8 === 0) b = await f.ticket(extra(1));
  return [a, b];
}

it('a status change of a ticket holds up no status change of another, assigned, tagged or neither', async () => {
  const [op1, op2] = [await f.operator(), await f.operator()];
  const tags = [await TicketTag.create({ name: unique('locktag'), colour: '#dddddd' }), await TicketTag.create({ name: unique('locktag'), colour: '#dddddd' })];
  const links: Record<string, (i: number) => Record<string, unknown>> = {
    assigned: (i) => ({ assignedto: [[op1, op2][i].id] }), tagged: (i) => ({ tag: [tags[i].id] }), neither: () => ({}),
  };
  for (const extra of Object.values(links)) {
    const [a, b] = await twoTickets(extra);
    // Every count row the moves below touch exists already (a row's first INSERT takes a gap lock).
    for (const [id, to] of [[a.id, ctx.otherStatus], [b.id, ctx.resolvedStatus]]) {
      await setStatus(id, to);
      await setStatus(id, ctx.openStatus);
    }
    expect(await whileHeld((t) => setStatus(a.id, ctx.otherStatus, t), () => tryWrite('UPDATE tickets SET status_id = ? WHERE id = ?', [ctx.resolvedStatus, b.id])))
      .toBe('free');
  }
});

it('a user\'s or an operator\'s delete holds up no write of a ticket they have nothing to do with', async () => {
  const op = await f.operator();
  const leaving = await f.user();
  await f.ticket({ user: leaving.id, assignedto: [op.id] });
  const other = await f.ticket();
  const touch = () => tryWrite('UPDATE tickets SET subject = ? WHERE id = ?', [`Unrelated ${unique('s')}`, other.id]);
  expect(await whileHeld((t) => deleteUser(leaving, t), touch)).toBe('free');
  expect(await whileHeld((t) => deleteOperator(op, t), touch)).toBe('free');
  expect(await User.findByPk(leaving.id)).toBeNull();
  expect(await User.findByPk(op.id)).toBeNull();
});

it('a tag\'s delete holds up no write of a ticket without it', async () => {
  const tag = await TicketTag.create({ name: unique('locktag'), colour: '#dddddd' });
  await f.ticket({ tag: [tag.id] });
  const other = await f.ticket();
  expect(await whileHeld((t) => tagResource.destroy!(tag, { transaction: t } as never), () => tryWrite('UPDATE tickets SET subject = ? WHERE id = ?', [`Untagged ${unique('s')}`, other.id])))
    .toBe('free');
  expect(await TicketTag.findByPk(tag.id)).toBeNull();
});
