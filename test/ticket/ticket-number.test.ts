/**
 * Ticket numbers: the default format, the global setting, a department's own format, %S (the
 * ticket id) under concurrency, and a random format's retry on a collision of the unique key.
 */
import { Department, Setting, Ticket } from '../../src/db/models';
import { transaction } from '../../src/db/transaction';
import { sequelize } from '../../src/db/sequelize';
import { parseNumberFormat } from '../../src/ticket/numberFormat';
import { assignTicketNumber, insertNumbered, placeholderNumber } from '../../src/ticket/tickets/number';
import { createTickets, type CreateTicketInput } from '../../src/ticket/tickets/service';
import { unique, useApi } from '../helpers/app';
import { expectSuccess } from '../helpers/envelope';
import { ticketContext, ticketFactories, type TicketContext } from './ticketSupport';

const api = useApi();
let ctx: TicketContext;
beforeAll(async () => { ctx = await ticketContext(); });
const f = ticketFactories(api, () => ctx);

/** Letters only this test run uses, as a literal prefix of a format. */
const prefix = () => Array.from({ length: 6 }, () => 'ABCDEFGHIJKLMNOPQRSTUVWXYZ'[Math.floor(Math.random() * 26)]).join('');

async function withGlobalFormat<T>(format: string, work: () => Promise<T>): Promise<T> {
  const setting = (await Setting.findOne({ where: { scope: 'ticket', name: 'ticket_number_format' } }))!;
  const before = setting.value;
  await setting.update({ value: format });
  try {
    return await work();
  } finally {
    await setting.update({ value: before });
  }
}

describe('ticket numbers', () => {
  it('the default format %N{7}: seven digits, unique', async () => {
    const numbers = await Promise.all(Array.from({ length: 5 }, async () => (await f.ticket()).number));
    for (const n of numbers) expect(n).toMatch(/^\d{7}$/);
    expect(new Set(numbers).size).toBe(5);
  });

  it('the global ticket_number_format setting', async () => {
    const p = prefix();
    const data = await withGlobalFormat(`${p}-%S`, () => f.ticket());
    expect(data.number).toBe(`${p}-${data.id}`);
  });

  it('a department\'s own format wins over the global one; date tokens use the creation time', async () => {
    const p = prefix();
    const dept = await f.department({ ticket_number_format: `${p}-%Y%m-%L{2}%N{4}` });
    const createdAt = Date.UTC(2024, 6, 15, 12) / 1000;
    const data = await withGlobalFormat('%S', () => f.ticket({ department: dept.id, created_at: createdAt }));
    expect(data.number).toMatch(new RegExp(`^${p}-202407-[A-Z]{2}\\d{4}$`));
  });

  it('ten tickets opened at once with %S get ten different numbers: their ids', async () => {
    const p = prefix();
    const dept = await f.department({ ticket_number_format: `${p}%S` });
    const users = await Promise.all(Array.from({ length: 10 }, () => f.user()));
    const results = await Promise.all(users.map((u) => api.post('/api/ticket/ticket', f.body({ user: u.id, department: dept.id }))));
    const tickets = results.map((r) => expectSuccess(r, 'Successfully created new ticket!'));
    expect(new Set(tickets.map((t) => t.number)).size).toBe(10);
    for (const t of tickets) expect(t.number).toBe(`${p}${t.id}`);
  });

  it('a random number already taken is drawn again; a format nearly used up is widened', async () => {
    const p = prefix();
    const taken = await f.ticket();
    await Ticket.update({ number: `${p}00000` }, { where: { id: taken.id } });
    const tokens = parseNumberFormat(`${p}%N{5}`);
    const other = await f.ticket();
    // The first five draws give 00000 (taken), then 7s.
    let draws = 0;
    const random = (max: number) => (draws++ < 5 ? 0 : 7 % max);
    const number = await sequelize().transaction(async (t) => {
      await Ticket.update({ number: placeholderNumber() }, { where: { id: other.id }, transaction: t });
      return assignTicketNumber(other.id, tokens, new Date(), 'UTC', t, random);
    });
    expect(number).toBe(`${p}77777`);
    expect((await Ticket.findByPk(other.id))!.number).toBe(`${p}77777`);

    // Always 00000: five collisions, then two more digits.
    const third = await f.ticket();
    const widened = await sequelize().transaction(async (t) => assignTicketNumber(third.id, tokens, new Date(), 'UTC', t, () => 0));
    expect(widened).toBe(`${p}0000000`);
  });

  it('a stored department format that no longer passes the checks falls back to the global one', async () => {
    const dept = await f.department();
    await Department.update({ ticket_number_format: '%N' }, { where: { id: dept.id } });
    const p = prefix();
    const data = await withGlobalFormat(`${p}%S`, () => f.ticket({ department: dept.id }));
    expect(data.number).toBe(`${p}${data.id}`);
  });
});

describe('ticket numbers of a batch of tickets (createTickets, insertNumbered)', () => {
  const input = (departmentId: number, userId: number): CreateTicketInput => ({
    departmentId, userId, statusId: ctx.openStatus, priorityId: ctx.priorityId, subject: `Batch ${unique('b')}`, text: 'Hello',
    sendUserEmail: false, sendOperatorsEmail: false,
  });

  /** Inserts tickets of `user` with the given numbers, as createTickets's insert does (one statement). */
  const insertFor = (model: Ticket, userId: number, t: Parameters<Parameters<typeof transaction>[0]>[0]) => (numbers: string[]) => Ticket.bulkCreate(numbers.map((number) => ({
    number, department_id: model.department_id, brand_id: model.brand_id, channel_id: model.channel_id, user_id: userId,
    status_id: model.status_id, priority_id: model.priority_id, subject: 'Batch', token: placeholderNumber().slice(1, 41), locked: 0, merged: 0, internal: 0,
  })), { transaction: t });

  it('random numbers of a batch are made different from each other and from those taken before the INSERT', async () => {
    const p = prefix();
    const tokens = parseNumberFormat(`${p}%N{5}`);
    const taken = await f.ticket();
    await Ticket.update({ number: `${p}00000` }, { where: { id: taken.id } });
    const model = (await Ticket.findByPk(taken.id))!;
    const user = await f.user();
    // Every row first draws 00000 (taken, and the same for all three), then 01234, 56789, 01234, ...
    let draws = 0;
    const random = (max: number) => (draws++ < 15 ? 0 : (draws - 16) % max);
    let inserts = 0;
    const rows = await transaction((t) => insertNumbered([0, 1, 2].map(() => ({ tokens, date: new Date() })), 'UTC', (numbers) => {
      inserts++;
      return insertFor(model, user.id, t)(numbers);
    }, t, random));
    const numbers = rows.map((r) => r.number);
    expect(inserts).toBe(1);
    expect(new Set([...numbers, `${p}00000`]).size).toBe(4);
    // (The scripted draws collide often enough that some rows are widened.)
    for (const n of numbers) expect(n).toMatch(new RegExp(`^${p}\\d{5}(\\d\\d)*$`));
  });

  it('a number taken between the check and the INSERT fails it: that row alone is drawn again', async () => {
    const p = prefix();
    const tokens = parseNumberFormat(`${p}%N{6}`);
    const other = await f.ticket();
    const user = await f.user();
    const model = (await Ticket.findByPk(other.id))!;
    const attempts: string[][] = [];
    const rows = await transaction((t) => insertNumbered([0, 1, 2].map(() => ({ tokens, date: new Date() })), 'UTC', async (numbers) => {
      attempts.push([...numbers]);
      // Another ticket takes the second number just before the first INSERT.
      if (attempts.length === 1) await Ticket.update({ number: numbers[1] }, { where: { id: other.id }, transaction: t });
      return insertFor(model, user.id, t)(numbers);
    }, t));
    expect(attempts).toHaveLength(2);
    expect(attempts[1][0]).toBe(attempts[0][0]);
    expect(attempts[1][2]).toBe(attempts[0][2]);
    expect(attempts[1][1]).not.toBe(attempts[0][1]);
    expect(rows.map((r) => r.number)).toEqual(attempts[1]);
  });

  it('a batch of %S tickets and random ones: each %S ticket numbered by its id, in one UPDATE', async () => {
    const p = prefix();
    const sequential = await f.department({ ticket_number_format: `${p}%S` });
    const random = await f.department({ ticket_number_format: `${p}-%N{8}` });
    const user = await f.user();
    const created = await transaction((t) => createTickets([input(sequential.id, user.id), input(random.id, user.id), input(sequential.id, user.id)], t));
    expect(created[0].ticket.number).toBe(`${p}${created[0].ticket.id}`);
    expect(created[2].ticket.number).toBe(`${p}${created[2].ticket.id}`);
    expect(created[1].ticket.number).toMatch(new RegExp(`^${p}-\\d{8}$`));
    for (const c of created) expect((await Ticket.findByPk(c.ticket.id))!.number).toBe(c.ticket.number);
  });
});
