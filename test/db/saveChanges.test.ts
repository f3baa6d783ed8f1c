/**
 * db/saveChanges.ts: what changed on a locked record, saved as `save` saves it (the changed
 * columns and updated_at, in one UPDATE) on the driver; a model with hooks of its own on saves is
 * saved by Sequelize, so that its hooks (a cache's version) still run.
 */
import { banVersion } from '../../src/auth/accessCache';
import { IpBan, Ticket } from '../../src/db/models';
import { lockById } from '../../src/db/load';
import { saveChanges } from '../../src/db/saveChanges';
import { countQueries } from '../../src/db/sequelize';
import { transaction } from '../../src/db/transaction';
import { writeCount } from '../../src/db/writes';
import { useApi } from '../helpers/app';
import { ticketContext, ticketFactories, type TicketContext } from '../ticket/ticketSupport';

const api = useApi();
let ctx: TicketContext;
beforeAll(async () => { ctx = await ticketContext(); });
const f = ticketFactories(api, () => ctx);

it('saves the changed columns and updated_at in one UPDATE, the values as placeholders, and counts it as a write', async () => {
  const { id } = await f.ticket();
  await Ticket.update({ updated_at: 1000 }, { where: { id }, hooks: false });
  const cc = JSON.stringify(["o'brien@example.com", 'back\\slash@example.com']);
  const { result, queries } = await countQueries(() => transaction(async (t) => {
    const ticket = (await lockById(Ticket, id, t, 'update'))!;
    const before = writeCount(t);
    ticket.set({ cc, last_reply_by: 2, due_time: null });
    await saveChanges(ticket, t);
    return { before, after: writeCount(t), changed: ticket.changed(), previous: ticket.previous() };
  }));
  const updates = queries.filter((q) => q.includes('UPDATE `tickets` SET'));
  expect(updates).toHaveLength(1);
  expect(updates[0]).toMatch(/UPDATE `tickets` SET `cc` = \?, `last_reply_by` = \?, (`due_time` = \?, )?`updated_at` = \? WHERE `id` = \?/);
  expect(updates[0]).not.toContain('brien');
  expect(result.after).toBe(result.before + 1);
  expect(result.changed).toBe(false);
  expect(result.previous).toEqual({});
  const stored = (await Ticket.findByPk(id))!;
  expect(stored.cc).toBe(cc);
  expect(stored.last_reply_by).toBe(2);
  expect(stored.due_time).toBeNull();
  expect(stored.updated_at).toBeGreaterThan(1000);
});

it('sends nothing when nothing changed (a value set to what it holds is no change)', async () => {
  const { id } = await f.ticket();
  const { result, queries } = await countQueries(() => transaction(async (t) => {
    const ticket = (await lockById(Ticket, id, t, 'update'))!;
    const before = writeCount(t);
    ticket.set('subject', ticket.subject);
    await saveChanges(ticket, t);
    return writeCount(t) - before;
  }));
  expect(queries.filter((q) => q.includes('UPDATE `tickets` SET'))).toEqual([]);
  expect(result).toBe(0);
});

it('a model a cache watches is saved by Sequelize: its hook bumps the cache version after the commit', async () => {
  const ban = await IpBan.create({ ip: `203.0.113.${1 + Math.floor(Math.random() * 250)}`, type: 1, reason: 'before' });
  const version = await banVersion();
  await transaction(async (t) => {
    const locked = (await lockById(IpBan, ban.id, t, 'update'))!;
    locked.set('reason', 'after');
    await saveChanges(locked, t);
  });
  expect((await IpBan.findByPk(ban.id))!.reason).toBe('after');
  expect(await banVersion()).not.toBe(version);
  await ban.destroy();
});
