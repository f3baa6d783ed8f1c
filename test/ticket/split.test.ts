/**
 * Splitting a ticket (`POST /api/ticket/ticket/{id}/split`), the counterpart of merge: a message,
 * or it and those after it, into a new ticket, with a note on both, events and audit entries.
 */
import { Op, QueryTypes } from 'sequelize';
import { DomainEvent, Ticket, TicketAttachment, TicketMessage } from '../../src/db/models';
import { sequelize } from '../../src/db/sequelize';
import { auditSnapshot, diff } from '../../src/ticket/tickets/audit';
import { useApi } from '../helpers/app';
import { expectError, expectSuccess } from '../helpers/envelope';
import { b64, ticketContext, ticketFactories, type TicketContext } from './ticketSupport';

const api = useApi();
let ctx: TicketContext;
const f = ticketFactories(api, () => ctx);
beforeAll(async () => {
  ctx = await ticketContext();
});
const BASE = '/api/ticket/ticket';
const messagesOf = async (ticketId: number) => (await TicketMessage.findAll({ where: { ticket_id: ticketId }, order: [['id', 'ASC']] }));

describe('POST /api/ticket/ticket/{id}/split', () => {
  it('moves a message and those after it into a new ticket, with a note on both, events and audit', async () => {
    const op = await f.operator();
    const ticket = await f.ticket();
    const [opening] = await messagesOf(ticket.id);
    const second = await f.message(ticket, { attachment: [{ filename: 'a.txt', contents: b64('x') }] });
    const third = await f.message(ticket);
    const before = (await DomainEvent.max<number, DomainEvent>('id')) ?? 0;
    const res = await api.post(`${BASE}/${ticket.id}/split`, { message_id: second.id, following: 1, user_id: op.id, subject: 'Second question' });
    const created = expectSuccess(res, 'Successfully split the ticket!');
    expect(created.id).not.toBe(ticket.id);
    expect(created).toMatchObject({ subject: 'Second question', user_id: ticket.user_id, department_id: ticket.department_id, status_id: ticket.status_id });
    expect(created.number).not.toBe(ticket.number);

    const moved = await messagesOf(created.id);
    expect(moved.map((m) => m.id).slice(0, 2)).toEqual([second.id, third.id]);
    expect(moved.slice(0, 2).every((m) => m.original_ticket_id === ticket.id)).toBe(true);
    expect(moved[2]).toMatchObject({ type: 1, user_id: op.id, text: `Split from ticket #${ticket.number}.` });
    const kept = await messagesOf(ticket.id);
    expect(kept.map((m) => m.id)[0]).toBe(opening.id);
    expect(kept[1]).toMatchObject({ type: 1, text: `Split: 2 message(s) moved to ticket #${created.number}.` });
    expect(await TicketAttachment.count({ where: { message_id: second.id, ticket_id: created.id } })).toBe(1);

    const events = (await DomainEvent.findAll({ order: [['id', 'DESC']], limit: 10 })).map((e) => ({ name: e.name, p: JSON.parse(e.payload) }));
    expect(events).toEqual(expect.arrayContaining([
      // Each with its audit entry (the change set).
      expect.objectContaining({
        name: 'ticket.created', p: expect.objectContaining({ ticketId: created.id, sendUserEmail: false, audit: expect.objectContaining({ action: 'split_from' }) }),
      }),
      expect.objectContaining({
        name: 'ticket.updated', p: expect.objectContaining({ ticketId: ticket.id, changes: ['split'], audit: expect.objectContaining({ action: 'split' }) }),
      }),
    ]));
    // In the feed's order: the new ticket is announced (its first message: the first moved one, not
    // the note) before any message of it, then the notes, then the old ticket's change.
    const feed = (await DomainEvent.findAll({ where: { id: { [Op.gt]: before } }, order: [['id', 'ASC']] }))
      .map((e) => ({ name: e.name, p: JSON.parse(e.payload) })).filter((e) => e.p.ticketId === created.id || e.p.ticketId === ticket.id);
    const noteOf = (ticketId: number) => (ticketId === created.id ? moved[2] : kept[1]).id;
    expect(feed.map((e) => [e.name, e.p.ticketId, e.p.messageId])).toEqual([
      ['ticket.created', created.id, second.id],
      ['message.created', ticket.id, noteOf(ticket.id)],
      ['message.created', created.id, noteOf(created.id)],
      ['ticket.updated', ticket.id, undefined],
    ]);
    const auditOf = async (id: number) => (await api.get(`${BASE}/${id}/audit`)).body.data;
    expect((await auditOf(ticket.id)).at(-1)).toMatchObject({ action: 'split', changes: { split_into: { after: created.id }, messages: { before: [second.id, third.id] } } });
    const [fromEntry] = await auditOf(created.id);
    expect(fromEntry).toMatchObject({ action: 'split_from', actor: { type: 'token' }, changes: { split_from: { after: ticket.id } } });
    // The new ticket's fields in that entry (built from what was written) are what the ticket holds.
    const { split_from: _from, messages: _messages, ...fields } = fromEntry.changes;
    expect(fields).toEqual(diff(null, await sequelize().transaction((t) => auditSnapshot(created.id, t))));
    expect(fields).toMatchObject({ subject: { after: 'Second question' }, status_id: { after: ticket.status_id } });
  });

  it('moves only the one message unless asked for those after it', async () => {
    const op = await f.operator();
    const ticket = await f.ticket();
    const second = await f.message(ticket);
    const third = await f.message(ticket);
    const created = expectSuccess(await api.post(`${BASE}/${ticket.id}/split`, { message_id: second.id, user_id: op.id }), 'Successfully split the ticket!');
    expect(created.subject).toBe(ticket.subject);
    expect((await messagesOf(created.id)).map((m) => m.id)[0]).toBe(second.id);
    expect((await messagesOf(ticket.id)).map((m) => m.id)).toContain(third.id);
  });

  it('refuses what cannot be split, changing nothing', async () => {
    const op = await f.operator();
    const ticket = await f.ticket();
    const [opening] = await messagesOf(ticket.id);
    const other = await f.ticket();
    const [foreign] = await messagesOf(other.id);
    const url = `${BASE}/${ticket.id}/split`;
    expectError(await api.post(url, { message_id: opening.id, following: 1, user_id: op.id }), 422, 'The ticket would keep no message: split from a later message.');
    expectError(await api.post(url, { message_id: foreign.id, user_id: op.id }), 422, 'The selected message id is invalid.');
    expectError(await api.post(url, { message_id: opening.id, user_id: ticket.user_id }), 422, 'The selected user id is invalid.');
    expectError(await api.post(url, { user_id: op.id }), 422, 'The message id field is required.');
    expect((await api.post(`${BASE}/999999999/split`, { message_id: opening.id, user_id: op.id })).status).toBe(404);
    expect((await messagesOf(ticket.id)).map((m) => m.id)).toEqual([opening.id]);
  });

  it('starts at a sent message: not a draft, and a draft is no message the ticket keeps', async () => {
    const op = await f.operator();
    const ticket = await f.ticket();
    const [opening] = await messagesOf(ticket.id);
    const draft = await f.message(ticket, { user_id: op.id, is_draft: 1 });
    const url = `${BASE}/${ticket.id}/split`;
    expectError(await api.post(url, { message_id: draft.id, user_id: op.id }), 422, 'The selected message id is invalid.');
    // Moving the opening message leaves only the draft: that is no message kept.
    expectError(await api.post(url, { message_id: opening.id, user_id: op.id }), 422, 'The ticket would keep no message: split from a later message.');
    expect((await messagesOf(ticket.id)).map((m) => m.id)).toEqual([opening.id, draft.id]);
  });

  it('gives a split ticket merged into another customer\'s its messages back when that customer is deleted, with a ticket merged into it before', async () => {
    const op = await f.operator();
    const ticket = await f.ticket();
    const [opening] = await messagesOf(ticket.id);
    const second = await f.message(ticket);
    const third = await f.message(ticket);
    const split = expectSuccess(await api.post(`${BASE}/${ticket.id}/split`, { message_id: second.id, following: 1, user_id: op.id }), 'Successfully split the ticket!');
    // A third customer's ticket merged into the split one, which then goes into another customer's.
    const earlier = await f.ticket();
    expectSuccess(await api.post(`${BASE}/${split.id}/merge`, { ids: [earlier.id] }), 'Successfully updated the ticket!');
    const splitThread = (await messagesOf(split.id)).map((m) => m.id);
    const [earlierOpening] = await TicketMessage.findAll({ where: { original_ticket_id: earlier.id } });
    expect(splitThread).toEqual(expect.arrayContaining([second.id, third.id, earlierOpening.id]));
    const theirs = await f.ticket();
    expectSuccess(await api.post(`${BASE}/${theirs.id}/merge`, { ids: [split.id] }), 'Successfully updated the ticket!');
    expect(await messagesOf(split.id)).toEqual([]);

    expect((await api.del(`/api/user/user/${theirs.user_id}`)).status).toBe(200);
    // Each ticket has what it brought to the merge: the split messages (written on the first
    // ticket, which they still name) and the split's note; the earlier ticket its own.
    const back = await messagesOf(split.id);
    expect(back.map((m) => m.id)).toEqual(splitThread.filter((id) => id !== earlierOpening.id));
    expect(back.filter((m) => [second.id, third.id].includes(m.id)).map((m) => m.original_ticket_id)).toEqual([ticket.id, ticket.id]);
    expect((await messagesOf(earlier.id)).map((m) => [m.id, m.original_ticket_id])).toEqual([[earlierOpening.id, null]]);
    // Given back, a message is merged from nowhere: no row is left of it.
    const [{ n }] = await sequelize().query<{ n: number }>('SELECT COUNT(*) AS n FROM ticket_message_merges WHERE message_id IN (:ids)', { replacements: { ids: splitThread }, type: QueryTypes.SELECT });
    expect(Number(n)).toBe(0);
    expect(await Ticket.findByPk(split.id)).toMatchObject({ merged_into_id: null });
    expect(await Ticket.findByPk(earlier.id)).toMatchObject({ merged_into_id: null });
    expect((await messagesOf(ticket.id)).map((m) => m.id)[0]).toBe(opening.id);
  });

  it('gives messages split out of a merge back to the ticket they were split into, when that one is merged and its target\'s customer deleted', async () => {
    const op = await f.operator();
    const target = await f.ticket();
    const source = await f.ticket();
    const [sourceOpening] = await messagesOf(source.id);
    const reply = await f.message(source);
    expectSuccess(await api.post(`${BASE}/${target.id}/merge`, { ids: [source.id] }), 'Successfully updated the ticket!');
    // The source's messages, now the target's, split into a ticket of their own, which goes into a third customer's.
    const split = expectSuccess(await api.post(`${BASE}/${target.id}/split`, { message_id: sourceOpening.id, following: 1, user_id: op.id }), 'Successfully split the ticket!');
    const splitThread = (await messagesOf(split.id)).map((m) => m.id);
    expect(splitThread).toEqual(expect.arrayContaining([sourceOpening.id, reply.id]));
    const third = await f.ticket();
    expectSuccess(await api.post(`${BASE}/${third.id}/merge`, { ids: [split.id] }), 'Successfully updated the ticket!');
    expect((await api.del(`/api/user/user/${third.user_id}`)).status).toBe(200);
    expect((await messagesOf(split.id)).map((m) => m.id)).toEqual(splitThread);
    expect(await Ticket.findByPk(split.id)).toMatchObject({ merged_into_id: null });
  });
});
