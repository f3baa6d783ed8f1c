/**
 * db/load.ts lockById: a record read under a lock in a transaction, as the model instance
 * findByPk(id, { transaction, lock }) gives, on the driver: the same values, saved as a found
 * record is (only what changed), and the lock held until the transaction ends.
 */
import { QueryTypes } from 'sequelize';
import { Ticket, User } from '../../src/db/models';
import { lockById } from '../../src/db/load';
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
