/**
 * Ticket messages: list (ticket_id, include_draft, by, type, DATES, PAGING), show, create (user and
 * operator replies, notes, drafts, pins, CC, the status rules of replies, locked and internal
 * tickets), update, delete; and addMessage as the mailbox worker calls it.
 */
import { Organisation, Ticket, TicketAttachment, TicketMessage } from '../../src/db/models';
import { sequelize } from '../../src/db/sequelize';
import { addMessage } from '../../src/ticket/messages/service';
import { useApi, nowSec, unique } from '../helpers/app';
import { expectDeleted, expectError, expectList, expectNotFound, expectSuccess } from '../helpers/envelope';
import { MESSAGE_KEYS, USER_SUMMARY_KEYS, b64, captureEvents, ids, ticketContext, ticketFactories, type TicketContext } from './ticketSupport';

const api = useApi();
const BASE = '/api/ticket/message';
let ctx: TicketContext;
beforeAll(async () => { ctx = await ticketContext(); });
const f = ticketFactories(api, () => ctx);
const events = captureEvents();

const created = (res: any) => expectSuccess(res, 'Successfully created new message!');
const ticketOf = async (id: number) => expectSuccess(await api.get(`/api/ticket/ticket/${id}`));
const trash = async (id: number) => expect((await api.del(`/api/ticket/ticket/${id}`)).body.message).toBe('Successfully moved the ticket to trash!');

describe('POST /api/ticket/message', () => {
  it('adds a user reply with every field of the spec, and emits message.created', async () => {
    const ticket = await f.ticket();
    const at = nowSec() - 60;
    const data = created(await api.post(BASE, {
      ticket_id: ticket.id, user_id: ticket.user_id, text: 'More details.', user_ip_address: '198.51.100.7', cc: ['Copy@Example.com'],
      created_at: at, send_operators_email: 0,
    }));
    expect(Object.keys(data).sort()).toEqual([...MESSAGE_KEYS].sort());
    expect(data).toMatchObject({
      ticket_id: ticket.id, channel_id: ticket.channel_id, user_id: ticket.user_id, user_ip_address: '198.51.100.7', by: 1, type: 0,
      text: 'More details.', is_draft: 0, social_id: null, created_at: at, pinned: 0, original_ticket_id: null, cc: ['copy@example.com'],
      attachments: [],
    });
    // An address is stored as bans compare it: IPv6 compressed and lower case, IPv4-mapped as IPv4.
    for (const [sent, stored] of [['2001:DB8:0:0::0001', '2001:db8::1'], ['::ffff:198.51.100.8', '198.51.100.8']]) {
      const m = created(await api.post(BASE, { ticket_id: ticket.id, user_id: ticket.user_id, text: 'From v6.', user_ip_address: sent, send_operators_email: 0 }));
      expect(m.user_ip_address).toBe(stored);
    }
    expect(Object.keys(data.user).sort()).toEqual([...USER_SUMMARY_KEYS].sort());
    expect(data.user.id).toBe(ticket.user_id);
    // The CC address joins the ticket's list.
    expect((await ticketOf(ticket.id)).cc).toEqual(['copy@example.com']);
    // The answer is the message as written, not read back: it is what a read of it shows.
    expect(expectSuccess(await api.get(`${BASE}/${data.id}`))).toEqual(data);
    expect(events.filter((e) => e.name === 'message.created' && e.payload.messageId === data.id)).toEqual([{
      name: 'message.created', inTransaction: true,
      payload: {
        ticketId: ticket.id, messageId: data.id, sendUserEmail: true, sendOperatorsEmail: false,
        // What the reply changed on the ticket, as its audit entry says.
        audit: {
          action: 'replied', actor: { type: 'user', id: ticket.user_id }, channel: 'api',
          changes: { cc: { before: [], after: ['copy@example.com'] }, message_id: { before: null, after: data.id } },
        },
      },
    }]);
  });

  it('a user reply reopens a resolved ticket with the default open status; an operator reply leaves the status', async () => {
    const ticket = await f.ticket();
    const op = await f.operator();
    await api.put(`/api/ticket/ticket/${ticket.id}`, { status: ctx.resolvedStatus });
    const operatorReply = created(await api.post(BASE, { ticket_id: ticket.id, user_id: op.id, text: 'Fixed it.' }));
    expect(operatorReply.by).toBe(0);
    let t = await ticketOf(ticket.id);
    expect(t).toMatchObject({ status_id: ctx.resolvedStatus, reopened_time: null });
    expect(t.resolved_time).toEqual(expect.any(Number));
    expect(events.find((e) => e.payload.messageId === operatorReply.id)!.payload).toMatchObject({ sendUserEmail: true, sendOperatorsEmail: false });

    await f.message(ticket, { text: 'Not fixed, sorry.' });
    t = await ticketOf(ticket.id);
    expect(t).toMatchObject({ status_id: ctx.openStatus, resolved_time: null, last_reply_time: expect.any(Number) });
    expect(t.reopened_time).toEqual(expect.any(Number));
    // Any status the ticket was in: a user reply puts it back to open.
    await api.put(`/api/ticket/ticket/${ticket.id}`, { status: ctx.otherStatus });
    await f.message(ticket);
    expect((await ticketOf(ticket.id)).status_id).toBe(ctx.openStatus);
  });

  it('notes and drafts change nothing on the ticket; drafts notify nobody', async () => {
    const ticket = await f.ticket({ status: ctx.otherStatus });
    const op = await f.operator();
    const before = await Ticket.findByPk(ticket.id);
    const note = created(await api.post(BASE, { ticket_id: ticket.id, user_id: op.id, text: 'Internal note', message_type: 1 }));
    expect(note).toMatchObject({ type: 1, by: 0 });
    const draft = created(await api.post(BASE, { ticket_id: ticket.id, user_id: ticket.user_id, text: 'Half-written', is_draft: 1 }));
    expect(draft.is_draft).toBe(1);
    const after = (await Ticket.findByPk(ticket.id))!;
    expect([after.status_id, after.last_reply_time, after.first_reply_time]).toEqual([before!.status_id, before!.last_reply_time, before!.first_reply_time]);
    expect(events.find((e) => e.payload.messageId === draft.id)!.payload).toMatchObject({ sendUserEmail: false, sendOperatorsEmail: false });
  });

  it('an operator\'s first reply starts the resolution due time', async () => {
    const plan = await (await import('../../src/db/models')).SlaPlan.create({ name: 'Plan' });
    await (await import('../../src/db/models')).SlaPlanTarget.create({ plan_id: plan.id, priority_id: ctx.priorityId, first_reply: 60, resolution: 600 });
    const ticket = await f.ticket({ sla_plan: plan.id });
    expect(ticket.due_time).toBe(ticket.reply_due_time);
    await api.post(BASE, { ticket_id: ticket.id, user_id: (await f.operator()).id, text: 'On it.' });
    expect((await ticketOf(ticket.id)).due_time).toBe(ticket.resolve_due_time);
  });

  it('who may write: the ticket\'s user, their organisation, CC addresses, operators', async () => {
    const org = await Organisation.create({ brand_id: ctx.brandId, name: 'Org' });
    const owner = await f.user({ organisation_id: org.id });
    const colleague = await f.user({ organisation_id: org.id });
    const copied = await f.user();
    const stranger = await f.user();
    const ticket = await f.ticket({ user: owner.id, cc: [copied.email] });
    created(await api.post(BASE, { ticket_id: ticket.id, user_id: colleague.id, text: 'Me too.' }));
    created(await api.post(BASE, { ticket_id: ticket.id, user_id: copied.id, text: 'Copied.' }));
    expectError(await api.post(BASE, { ticket_id: ticket.id, user_id: stranger.id, text: 'Hi' }), 422, 'The selected user id is invalid.');
    expectError(await api.post(BASE, { ticket_id: ticket.id, user_id: 999999999, text: 'Hi' }), 422, 'The selected user id is invalid.');
    expectError(await api.post(BASE, { ticket_id: 999999999, user_id: owner.id, text: 'Hi' }), 422, 'The selected ticket id is invalid.');
  });

  it('a CC address lets the user of the ticket\'s brand write, not a user of another brand with the same address', async () => {
    const { Brand } = await import('../../src/db/models');
    const other = await Brand.create({ name: unique('Brand') });
    const copied = await f.user();
    const namesake = await f.user({ brand_id: other.id, email: copied.email });
    const ticket = await f.ticket({ cc: [copied.email] });
    const count = await TicketMessage.count({ where: { ticket_id: ticket.id } });
    expectError(await api.post(BASE, { ticket_id: ticket.id, user_id: namesake.id, text: 'Not mine.' }), 422, 'The selected user id is invalid.');
    expect(await TicketMessage.count({ where: { ticket_id: ticket.id } })).toBe(count);
    created(await api.post(BASE, { ticket_id: ticket.id, user_id: copied.id, text: 'Copied.' }));
  });

  it('the ticket\'s own user is dropped from a message\'s CC addresses (and so from the ticket\'s)', async () => {
    const ticket = await f.ticket();
    const owner = (await (await import('../../src/db/models')).User.findByPk(ticket.user_id))!;
    const byOwner = created(await api.post(BASE, { ticket_id: ticket.id, user_id: owner.id, text: 'x', cc: [owner.email.toUpperCase(), 'dan@example.com'] }));
    expect(byOwner.cc).toEqual(['dan@example.com']);
    const op = await f.operator();
    const byOperator = created(await api.post(BASE, { ticket_id: ticket.id, user_id: op.id, text: 'y', cc: [owner.email, 'erin@example.com'] }));
    expect(byOperator.cc).toEqual(['erin@example.com']);
    expect((await ticketOf(ticket.id)).cc).toEqual(['dan@example.com', 'erin@example.com']);
  });

  it('the ticket\'s own user is dropped from CC by any of their addresses: the main one or an additional one', async () => {
    const { User, UserEmail } = await import('../../src/db/models');
    const ticket = await f.ticket();
    const owner = (await User.findByPk(ticket.user_id))!;
    const alt = `${unique('alt')}@example.com`;
    await UserEmail.create({ user_id: owner.id, email: alt });
    const op = await f.operator();
    const reply = created(await api.post(BASE, { ticket_id: ticket.id, user_id: op.id, text: 'x', cc: [alt.toUpperCase(), 'fay@example.com'] }));
    expect(reply.cc).toEqual(['fay@example.com']);
    expect((await ticketOf(ticket.id)).cc).toEqual(['fay@example.com']);
    // On the ticket's own create and update too.
    const opened = await f.ticket({ user: owner.id, cc: [alt, 'gus@example.com'] });
    expect(opened.cc).toEqual(['gus@example.com']);
    expect(expectSuccess(await api.put(`/api/ticket/ticket/${opened.id}`, { cc: [alt, 'hal@example.com'] }), 'Successfully updated the ticket!').cc).toEqual(['hal@example.com']);
  });

  it('a note\'s or a draft\'s CC addresses stay on the message: the ticket\'s CC list is left as it was', async () => {
    const ticket = await f.ticket();
    const op = await f.operator();
    const note = created(await api.post(BASE, { ticket_id: ticket.id, user_id: op.id, message_type: 1, text: 'internal', cc: ['note-cc@example.com'] }));
    const draft = created(await api.post(BASE, { ticket_id: ticket.id, user_id: op.id, is_draft: 1, text: 'later', cc: ['draft-cc@example.com'] }));
    expect([note.cc, draft.cc]).toEqual([['note-cc@example.com'], ['draft-cc@example.com']]);
    expect((await ticketOf(ticket.id)).cc).toEqual([]);
  });

  it('refuses notes by users, user replies to internal and to locked tickets (operators may still write)', async () => {
    const ticket = await f.ticket();
    expectError(await api.post(BASE, { ticket_id: ticket.id, user_id: ticket.user_id, text: 'x', message_type: 1 }), 422,
      'The selected message type is invalid: only operators can add notes.');
    const op = await f.operator();
    const internal = await f.ticket({ user: op.id, internal: 1 });
    const user = await f.user();
    await api.put(`/api/ticket/ticket/${internal.id}`, { cc: [user.email] });
    expectError(await api.post(BASE, { ticket_id: internal.id, user_id: user.id, text: 'x' }), 422, 'Not an operator. Only operators can reply to internal tickets.');
    await api.put(`/api/ticket/ticket/${ticket.id}`, { locked: 1 });
    expectError(await api.post(BASE, { ticket_id: ticket.id, user_id: ticket.user_id, text: 'x' }), 422,
      `The ticket #${ticket.number} is locked: the user cannot reply to it (a new ticket can be opened).`);
    created(await api.post(BASE, { ticket_id: ticket.id, user_id: op.id, text: 'Closing words.' }));
    expect(await TicketMessage.count({ where: { ticket_id: ticket.id } })).toBe(2);
  });

  it('refuses a reply to a trashed ticket (its mail would never go out) and writes nothing; drafts and notes are kept; restored, it takes one', async () => {
    const ticket = await f.ticket();
    const op = await f.operator();
    await trash(ticket.id);
    const before = (await Ticket.findByPk(ticket.id))!.toJSON();
    const count = await TicketMessage.count({ where: { ticket_id: ticket.id } });
    const seen = events.length;
    const refused = `The ticket #${ticket.number} is in the trash: restore it before replying to it.`;
    const reply = { ticket_id: ticket.id, user_id: op.id, text: 'We fixed it.', cc: ['boss@example.com'], attachment: [{ filename: 'fix.txt', contents: b64('done') }] };
    expectError(await api.post(BASE, reply), 422, refused);
    expectError(await api.post(BASE, { ...reply, send_user_email: 0, send_operators_email: 0 }), 422, refused);
    expectError(await api.post(BASE, { ticket_id: ticket.id, user_id: ticket.user_id, text: 'Any news?' }), 422, refused);
    expect(await TicketMessage.count({ where: { ticket_id: ticket.id } })).toBe(count);
    expect(await TicketAttachment.count({ where: { ticket_id: ticket.id } })).toBe(0);
    expect((await Ticket.findByPk(ticket.id))!.toJSON()).toEqual(before);
    expect(events.slice(seen)).toEqual([]);
    // A draft mails nothing, a note is the operators' own record: kept.
    expect(created(await api.post(BASE, { ...reply, is_draft: 1 })).is_draft).toBe(1);
    expect(created(await api.post(BASE, { ticket_id: ticket.id, user_id: op.id, text: 'Trashed: spam.', message_type: 1 })).type).toBe(1);
    expectSuccess(await api.post(`/api/ticket/ticket/${ticket.id}/restore`), 'Successfully restored the ticket!');
    const sent = created(await api.post(BASE, reply));
    expect(events.filter((e) => e.name === 'message.created' && e.payload.messageId === sent.id)).toEqual([
      expect.objectContaining({ payload: expect.objectContaining({ sendUserEmail: true }) }),
    ]);
  });

  it('validates the body', async () => {
    const ticket = await f.ticket();
    for (const key of ['ticket_id', 'user_id', 'text']) {
      const body: Record<string, unknown> = { ticket_id: ticket.id, user_id: ticket.user_id, text: 'x' };
      delete body[key];
      expectError(await api.post(BASE, body), 422, `The ${key.replace('_', ' ')} field is required.`);
    }
    expectError(await api.post(BASE, { ticket_id: ticket.id, user_id: ticket.user_id, text: 'x', message_type: 2 }), 422, 'The selected message type is invalid.');
    expectError(await api.post(BASE, { ticket_id: ticket.id, user_id: ticket.user_id, text: 'x', created_at: nowSec() + 3600 }), 422,
      'The created at must be a date before or equal to now.');
  });

  it('pinned, and attachments', async () => {
    const ticket = await f.ticket();
    const data = created(await api.post(BASE, {
      ticket_id: ticket.id, user_id: ticket.user_id, text: 'See attached', pinned: 1, attachment: [{ filename: 'shot.png', contents: b64('PNGDATA') }],
    }));
    expect(data.pinned).toBe(1);
    expect(data.attachments).toEqual([expect.objectContaining({ ticket_id: ticket.id, message_id: data.id, original_name: 'shot.png' })]);
    expect(data.attachments[0].upload).toMatchObject({ filename: 'shot.png', folder: 'tickets', mime: 'image/png', size: '7 B' });
    expect(expectSuccess(await api.get(`${BASE}/${data.id}`))).toEqual(data);
  });
});

describe('addMessage (the mailbox worker\'s way in)', () => {
  it('a reply by mail: channel email, to the target of a merged ticket', async () => {
    const target = await f.ticket();
    const source = await f.ticket({ user: target.user_id });
    expectSuccess(await api.post(`/api/ticket/ticket/${target.id}/merge`, { ids: [source.id] }), 'Successfully updated the ticket!');
    const { message } = await sequelize().transaction((t) => addMessage({ ticketId: source.id, userId: target.user_id, text: 'By mail', channel: 'email' }, t));
    const email = (await (await import('../../src/db/models')).Channel.findOne({ where: { name: 'Email' } }))!;
    expect(message).toMatchObject({ ticket_id: target.id, channel_id: email.id, by: 1, type: 0 });
  });

  it('a reply by mail matched to a ticket trashed since is filed all the same (the mailbox\'s own rules, intoTrash)', async () => {
    const ticket = await f.ticket();
    await trash(ticket.id);
    const { message } = await sequelize().transaction((t) => addMessage({ ticketId: ticket.id, userId: ticket.user_id, text: 'By mail', channel: 'email' }, t, { intoTrash: true }));
    expect(message).toMatchObject({ ticket_id: ticket.id, by: 1, type: 0, is_draft: 0 });
  });
});

describe('GET /api/ticket/message', () => {
  it('lists one ticket\'s messages: drafts only with include_draft; by, type, DATES, PAGING', async () => {
    const ticket = await f.ticket({ created_at: nowSec() - 1000 });
    const op = await f.operator();
    const first = (await TicketMessage.findOne({ where: { ticket_id: ticket.id } }))!;
    const reply = created(await api.post(BASE, { ticket_id: ticket.id, user_id: op.id, text: 'Reply', created_at: nowSec() - 500 }));
    const note = created(await api.post(BASE, { ticket_id: ticket.id, user_id: op.id, text: 'Note', message_type: 1 }));
    const draft = created(await api.post(BASE, { ticket_id: ticket.id, user_id: op.id, text: 'Draft', is_draft: 1 }));
    const list = async (q: Record<string, unknown>) => ids(expectList(await api.get(BASE, { ticket_id: ticket.id, ...q })));
    expect(await list({})).toEqual([first.id, reply.id, note.id]);
    expect(await list({ include_draft: 1 })).toEqual([first.id, reply.id, note.id, draft.id]);
    expect(await list({ by: 1 })).toEqual([first.id]);
    expect(await list({ by: 0 })).toEqual([reply.id, note.id]);
    expect(await list({ type: 1 })).toEqual([note.id]);
    expect(await list({ type: 0 })).toEqual([first.id, reply.id]);
    expect(await list({ created_at_max: nowSec() - 400 })).toEqual([first.id, reply.id]);
    const page = await api.get(BASE, { ticket_id: ticket.id, start: 2, limit: 1, order_direction: 'desc' });
    expect([ids(expectList(page)), page.body.count]).toEqual([[reply.id], 3]);
    expectError(await api.get(BASE), 422, 'The ticket id field is required.');
  });

  it('shows one message, 404 for an unknown one', async () => {
    const ticket = await f.ticket();
    const message = await f.message(ticket);
    expect(expectSuccess(await api.get(`${BASE}/${message.id}`))).toEqual(message);
    expectNotFound(await api.get(`${BASE}/999999999`), 'message');
  });
});

describe('PUT and DELETE /api/ticket/message/{id}', () => {
  it('replaces the text and pins or unpins', async () => {
    const ticket = await f.ticket();
    const message = await f.message(ticket);
    const res = expectSuccess(await api.put(`${BASE}/${message.id}`, { text: 'Edited', pinned: 1 }), 'Successfully updated the message!');
    expect(res).toMatchObject({ id: message.id, text: 'Edited', pinned: 1 });
    expect(expectSuccess(await api.put(`${BASE}/${message.id}`, { pinned: 0 }), 'Successfully updated the message!')).toMatchObject({ text: 'Edited', pinned: 0 });
    expectError(await api.put(`${BASE}/${message.id}`, { text: '' }), 422, 'The text field is required.');
    expectNotFound(await api.put(`${BASE}/999999999`, { text: 'x' }), 'message');
  });

  it('an edit, and an attachment\'s delete, move the updated_at of what shows them (the message, the ticket); an edit that changes nothing moves none', async () => {
    const ticket = await f.ticket();
    const message = await f.message(ticket, { attachment: [{ filename: 'a.txt', contents: b64('a') }, { filename: 'b.txt', contents: b64('b') }] });
    const past = nowSec() - 1000;
    // By hand: a model's update stamps updated_at itself.
    const backdate = async () => {
      await sequelize().query('UPDATE ticket_messages SET updated_at = ? WHERE id = ?', { replacements: [past, message.id] });
      await sequelize().query('UPDATE tickets SET updated_at = ? WHERE id = ?', { replacements: [past, ticket.id] });
    };
    const stamps = async () => [(await TicketMessage.findByPk(message.id))!.updated_at, (await Ticket.findByPk(ticket.id))!.updated_at];

    // Each change is a message.updated in its transaction (the feed and webhooks pass it on); none for no change.
    const updates = () => events.filter((e) => e.name === 'message.updated' && e.payload.messageId === message.id);
    const updated = { name: 'message.updated', payload: { ticketId: ticket.id, messageId: message.id }, inTransaction: true };

    await backdate();
    expectSuccess(await api.put(`${BASE}/${message.id}`, { pinned: 0 }), 'Successfully updated the message!');
    expect(await stamps()).toEqual([past, past]);
    expect(updates()).toEqual([]);
    expectSuccess(await api.put(`${BASE}/${message.id}`, { text: 'Edited' }), 'Successfully updated the message!');
    for (const stamp of await stamps()) expect(stamp).toBeGreaterThanOrEqual(nowSec() - 5);
    expect(updates()).toEqual([updated]);

    await backdate();
    expectDeleted(await api.del(`/api/ticket/attachment/${message.attachments[0].id}`), 'attachment');
    for (const stamp of await stamps()) expect(stamp).toBeGreaterThanOrEqual(nowSec() - 5);
    expect(expectSuccess(await api.get(`${BASE}/${message.id}`)).attachments.map((a: any) => a.original_name)).toEqual(['b.txt']);
    expect(updates()).toEqual([updated, updated]);
  });

  it('deletes a message and its attachments', async () => {
    const ticket = await f.ticket();
    const message = await f.message(ticket, { attachment: [{ filename: 'a.txt', contents: b64('a') }] });
    expectDeleted(await api.del(`${BASE}/${message.id}`), 'message');
    expectNotFound(await api.get(`${BASE}/${message.id}`), 'message');
    expectNotFound(await api.get(`/api/ticket/attachment/${message.attachments[0].id}`), 'attachment');
    // Its event, written in the delete's transaction.
    expect(events.filter((e) => e.name === 'message.deleted' && e.payload.messageId === message.id)).toEqual([
      { name: 'message.deleted', payload: { ticketId: ticket.id, messageId: message.id }, inTransaction: true },
    ]);
  });
});
