/**
 * Ticket numbers: the default format, the global setting, a department's own format, %S (the
 * ticket id) under concurrency, and a random format's retry on a collision of the unique key.
 */
import { Department, Setting, Ticket } from '../../src/db/models';
import { sequelize } from '../../src/db/sequelize';
import { parseNumberFormat } from '../../src/ticket/numberFormat';
import { assignTicketNumber, placeholderNumber } from '../../src/ticket/tickets/number';
import { useApi } from '../helpers/app';
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
