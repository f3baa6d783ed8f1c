/**
 * db/load.ts lockById: a record read under a lock in a transaction, as the model instance
 * findByPk(id, { transaction, lock }) gives, on the driver: the same values, saved as a found
 * record is (only what changed), and the lock held until the transaction ends; and readBack, which
 * sets an instance to its stored row as reload() does (a write's answer).
 */
import { QueryTypes } from 'sequelize';
import { Ticket, User } from '../../src/db/models';
import { lockById, readBack, recordById } from '../../src/db/load';
import { countQueries, sequelize } from '../../src/db/sequelize';
import { transaction } from '../../src/db/transaction';
import { useApi } from '../helpers/app';
import { ticketContext, ticketFactories, type TicketContext } from '../ticket/ticketSupport';

const api = useApi();
let ctx: TicketContext;
beforeAll(async () => { ctx = await ticketContext(); });
const f = ticketFactories(api, () => ctx);

it('gives the instance findByPk gives, which saves only what changed', async () => {
  const { id } = await f.ticket();
  await transaction(async (t) => {
    const found = (await Ticket.findByPk(id, { transaction: t }))!;
    const { result: locked, queries } = await countQueries(() => lockById(Ticket, id, t, 'update'));
    expect(queries).toHaveLength(1);
    expect(queries[0]).toMatch(/FROM `tickets` WHERE `id` IN \(\?\) ORDER BY `id` ASC FOR UPDATE$/);
    expect(locked).toBeInstanceOf(Ticket);
    expect(locked!.isNewRecord).toBe(false);
    expect(locked!.get({ plain: true })).toEqual(found.get({ plain: true }));
    expect(locked!.changed()).toBe(false);
    locked!.set('subject', 'Locked and changed');
    expect(locked!.changed()).toEqual(['subject']);
    const { queries: saved } = await countQueries(() => locked!.save({ transaction: t }));
    expect(saved).toHaveLength(1);
    expect(saved[0]).toMatch(/^Executing \(.*\): UPDATE `tickets` SET `subject`=\?,`updated_at`=\? WHERE `id` = \?/);
  });
  expect((await Ticket.findByPk(id))!.subject).toBe('Locked and changed');
  await transaction(async (t) => {
    expect(await lockById(User, 2_000_000_000, t, 'share')).toBeNull();
    const user = await lockById(User, (await Ticket.findByPk(id))!.user_id, t, 'share');
    expect(user).toBeInstanceOf(User);
  });
});

it('holds its lock until the transaction ends: another writer of the row is refused meanwhile', async () => {
  const { id } = await f.ticket();
  // NOWAIT: refused at once (ER_LOCK_WAIT_TIMEOUT) where the row is locked, instead of waiting.
  const tryLock = () => sequelize().transaction((t) => sequelize().query('SELECT id FROM tickets WHERE id = ? FOR UPDATE NOWAIT', { replacements: [id], transaction: t, type: QueryTypes.SELECT }))
    .then(() => 'free', (err) => (/Lock wait timeout/.test(String(err?.message)) ? 'locked' : Promise.reject(err)));
  for (const lock of ['update', 'share'] as const) {
    await transaction(async (t) => {
      expect(await lockById(Ticket, id, t, lock)).toBeInstanceOf(Ticket);
      expect(await tryLock()).toBe('locked');
    });
    expect(await tryLock()).toBe('free');
  }
});

describe('readBack', () => {
  it('sets the instance to its row as stored in the transaction, one statement, and keeps the instance', async () => {
    const { id } = await f.ticket();
    await transaction(async (t) => {
      const record = (await lockById(Ticket, id, t, 'update'))!;
      // Changed in the transaction behind the instance's back (as a trigger or a statement would).
      await sequelize().query('UPDATE tickets SET subject = ? WHERE id = ?', { replacements: ['Changed in SQL', id], transaction: t });
      record.set('cc', 'not saved');
      const { queries } = await countQueries(() => readBack(record, t));
      expect(queries).toHaveLength(1);
      expect(record.subject).toBe('Changed in SQL');
      expect(record.cc).toBe((await Ticket.findByPk(id, { transaction: t }))!.cc);
      expect(record.changed()).toBe(false);
      expect(record.get({ plain: true })).toEqual((await Ticket.findByPk(id, { transaction: t }))!.get({ plain: true }));
    });
  });

  it('is an error for a record gone meanwhile', async () => {
    const { id } = await f.ticket();
    await expect(transaction(async (t) => {
      const record = (await lockById(Ticket, id, t, 'update'))!;
      await sequelize().query('DELETE FROM ticket_messages WHERE ticket_id = ?', { replacements: [id], transaction: t });
      await sequelize().query('DELETE FROM tickets WHERE id = ?', { replacements: [id], transaction: t });
      await readBack(record, t);
    })).rejects.toThrow(`Ticket ${id} could not be read back`);
    expect(await Ticket.findByPk(id)).not.toBeNull();
  });
});

describe('recordById', () => {
  it('narrows by the equalities of where, outside a transaction too, and gives the instance findOne gives', async () => {
    const { id, user_id: userId } = await f.ticket();
    const found = (await Ticket.findByPk(id))!;
    const { result: read, queries } = await countQueries(() => recordById(Ticket, id, { where: { user_id: userId } }));
    expect(queries).toEqual([expect.stringMatching(/FROM `tickets` WHERE `id` IN \(\?\) AND `user_id` = \? ORDER BY `id` ASC$/)]);
    expect(read).toBeInstanceOf(Ticket);
    expect(read!.get({ plain: true })).toEqual(found.get({ plain: true }));
    expect(await recordById(Ticket, id, { where: { user_id: userId + 1 } })).toBeNull();
    expect(await recordById(User, userId, { where: { type: 'operator' } })).toBeNull();
    expect((await recordById(User, userId, { where: { type: 'user' } }))!.id).toBe(userId);
  });
});
