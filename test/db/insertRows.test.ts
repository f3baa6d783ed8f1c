/**
 * db/insertRows.ts: rows of a model in one INSERT, returned in order with their ids and the values
 * `create` would have written (or, `stored`, as the database holds them); rows too long for one
 * statement go in several.
 */
import { Ticket, TicketMessage } from '../../src/db/models';
import { insertRows, STATEMENT_CHARS } from '../../src/db/insertRows';
import { countQueries } from '../../src/db/sequelize';
import { transaction } from '../../src/db/transaction';
import { useApi } from '../helpers/app';
import { ticketContext, ticketFactories, type TicketContext } from '../ticket/ticketSupport';

const api = useApi();
let ctx: TicketContext;
beforeAll(async () => { ctx = await ticketContext(); });
const f = ticketFactories(api, () => ctx);

const message = (ticket: Ticket, text: string) => ({ ticket_id: ticket.id, channel_id: ticket.channel_id, user_id: ticket.user_id, text });

it('inserts rows in one statement, in order, with their ids, defaults and timestamps', async () => {
  const ticket = (await Ticket.findByPk((await f.ticket()).id))!;
  const { result: rows, queries } = await countQueries(() => transaction((t) => insertRows(TicketMessage, ['one', 'two', 'three'].map((text) => message(ticket, text)), t)));
  expect(queries.filter((q) => q.includes('INSERT'))).toHaveLength(1);
  const stored = await TicketMessage.findAll({ where: { id: rows.map((r) => r.id) }, order: [['id', 'ASC']] });
  expect(stored.map((m) => [m.id, m.text, m.by, m.type, m.is_draft])).toEqual(rows.map((r) => [r.id, r.text, 1, 0, 0]));
  expect(rows.map((r) => r.text)).toEqual(['one', 'two', 'three']);
  for (const r of rows) {
    expect(r.isNewRecord).toBe(false);
    expect(r.created_at).toBeGreaterThan(0);
    expect(r.updated_at).toBe(r.created_at);
  }
});

it('values go as placeholders: quotes, backslashes, NUL and SQL in them are stored as given', async () => {
  const ticket = (await Ticket.findByPk((await f.ticket()).id))!;
  const texts = ["it's \\'; DROP TABLE tickets; --", 'back\\slash \\\\ and "double"', 'nul \u0000 byte', 'emoji 😀 and ünïcode', '?', ':name'];
  const { result: rows, queries } = await countQueries(() => transaction((t) => insertRows(TicketMessage, texts.map((text) => message(ticket, text)), t)));
  const [insert] = queries.filter((q) => q.includes('INSERT'));
  for (const text of ['DROP TABLE', 'back', 'emoji']) expect(insert).not.toContain(text);
  const stored = await TicketMessage.findAll({ where: { id: rows.map((r) => r.id) }, order: [['id', 'ASC']] });
  expect(stored.map((m) => m.text)).toEqual(texts);
});

it('rows longer than one statement takes go in several, the ids still in order', async () => {
  const ticket = (await Ticket.findByPk((await f.ticket()).id))!;
  const long = (c: string) => c.repeat(Math.ceil(STATEMENT_CHARS / 2));
  const { result: rows, queries } = await countQueries(() => transaction((t) => insertRows(TicketMessage, ['a', 'b', 'c'].map((c) => message(ticket, long(c))), t)));
  expect(queries.filter((q) => q.includes('INSERT'))).toHaveLength(3);
  const stored = await TicketMessage.findAll({ where: { id: rows.map((r) => r.id) }, order: [['id', 'ASC']] });
  expect(stored.map((m) => m.text[0])).toEqual(['a', 'b', 'c']);
  expect(stored.map((m) => m.text.length)).toEqual(rows.map(() => Math.ceil(STATEMENT_CHARS / 2)));
});

it('stored: returns each row as the database holds it, the columns left to its defaults too', async () => {
  const ticket = (await Ticket.findByPk((await f.ticket()).id))!;
  const written = message(ticket, 'as stored');
  const { result: rows, queries } = await countQueries(() => transaction((t) => insertRows(TicketMessage, [written, { ...written, text: 'second' }], t, { stored: true })));
  expect(queries.filter((q) => q.includes('INSERT'))).toEqual([expect.stringMatching(/ RETURNING \*$/)]);
  const stored = await TicketMessage.findAll({ where: { id: rows.map((r) => r.id) }, order: [['id', 'ASC']] });
  expect(rows.map((r) => r.get({ plain: true }))).toEqual(stored.map((m) => m.get({ plain: true })));
  // Columns no row gave, which the instances as written would not hold.
  const asWritten = await transaction((t) => insertRows(TicketMessage, [written], t));
  expect(asWritten[0].get('original_ticket_id')).toBeUndefined();
  expect(rows[0].get('original_ticket_id')).toBeNull();
  expect(rows.map((r) => r.isNewRecord)).toEqual([false, false]);
});
