/** Forwards: POST /api/ticket/forward, a message of type 2 with `extra`, by an operator. */
import { Brand, DepartmentEmail, TicketMessage } from '../../src/db/models';
import { useApi } from '../helpers/app';
import { expectError, expectSuccess } from '../helpers/envelope';
import { transactionWaves } from '../helpers/queries';
import { MESSAGE_KEYS, b64, captureEvents, ticketContext, ticketFactories, type TicketContext } from './ticketSupport';

const api = useApi();
const BASE = '/api/ticket/forward';
let ctx: TicketContext;
beforeAll(async () => { ctx = await ticketContext(); });
const f = ticketFactories(api, () => ctx);
const events = captureEvents();

const created = (res: any) => expectSuccess(res, 'Successfully created new message!');

describe('POST /api/ticket/forward', () => {
  it('creates a forward: type 2, by the operator, with its recipients, subject and sender in extra', async () => {
    const ticket = await f.ticket();
    const op = await f.operator();
    const data = created(await api.post(BASE, {
      ticket_id: ticket.id, user_id: op.id, text: 'Please have a look.', subject: 'Fwd: printer',
      to_address: ['Vendor@Example.com'], cc_address: ['boss@example.com'], attachment: [{ filename: 'spec.pdf', contents: b64('%PDF-1.4') }],
    }));
    expect(Object.keys(data).sort()).toEqual([...MESSAGE_KEYS, 'extra'].sort());
    const address = (await DepartmentEmail.findByPk(ticket.department_email_id))!.address;
    expect(data).toMatchObject({
      ticket_id: ticket.id, user_id: op.id, by: 0, type: 2, text: 'Please have a look.', is_draft: 0,
      extra: { to_address: ['vendor@example.com'], cc_address: ['boss@example.com'], bcc_address: null, subject: 'Fwd: printer', from_address: address },
    });
    expect(data.attachments).toEqual([expect.objectContaining({ original_name: 'spec.pdf', message_id: data.id })]);
    expect(events.filter((e) => e.name === 'message.forwarded')).toContainEqual({
      name: 'message.forwarded', inTransaction: true, payload: { ticketId: ticket.id, messageId: data.id },
    });
    // Listed with the ticket's messages (type 2), shown with extra.
    expect(expectSuccess(await api.get(`/api/ticket/message/${data.id}`)).extra.to_address).toEqual(['vendor@example.com']);
    // A forward leaves the ticket's CC list and status alone.
    expect(expectSuccess(await api.get(`/api/ticket/ticket/${ticket.id}`))).toMatchObject({ cc: [], status_id: ctx.openStatus });
  });

  it('reads its operator with the ticket\'s lock, in one round trip', async () => {
    const ticket = await f.ticket();
    const op = await f.operator();
    const body = { ticket_id: ticket.id, user_id: op.id, text: 'FYI', subject: 'Fwd', to_address: ['vendor@example.com'] };
    created(await api.post(BASE, body));
    const { result, waves } = await transactionWaves(() => api.post(BASE, body));
    expect(created(result)).toMatchObject({ user_id: op.id, type: 2 });
    expect(waves[1]).toHaveLength(2);
    expect(waves[1][0]).toMatch(/^SELECT .* FROM tickets .*FOR UPDATE$/s);
    expect(waves[1][1]).toMatch(/^SELECT .* FROM users WHERE .*type/s);
  });

  it('from_address: `me` is the operator\'s own address, an id a department address of the brand', async () => {
    const ticket = await f.ticket();
    const op = await f.operator();
    const mine = created(await api.post(BASE, { ticket_id: ticket.id, user_id: op.id, text: 'x', subject: 's', bcc_address: ['a@example.com'], from_address: 'me' }));
    expect(mine.extra).toMatchObject({ from_address: op.email, to_address: null, bcc_address: ['a@example.com'] });
    const dept = await f.department();
    const other = (await DepartmentEmail.findOne({ where: { department_id: dept.id } }))!;
    const chosen = created(await api.post(BASE, { ticket_id: ticket.id, user_id: op.id, text: 'x', subject: 's', to_address: ['a@example.com'], from_address: other.id }));
    expect(chosen.extra.from_address).toBe(other.address);
    expectError(await api.post(BASE, { ticket_id: ticket.id, user_id: op.id, text: 'x', subject: 's', to_address: ['a@example.com'], from_address: 999999 }), 422,
      'The selected from address is invalid.');
    expectError(await api.post(BASE, { ticket_id: ticket.id, user_id: op.id, text: 'x', subject: 's', to_address: ['a@example.com'], from_address: 'you' }), 422,
      'The selected from address is invalid.');
  });

  it('from_address of a ticket without a department address: the brand\'s, which the mail goes out from', async () => {
    const ticket = expectSuccess(await api.put(`/api/ticket/ticket/${(await f.ticket()).id}`, { department_email: 0 }), 'Successfully updated the ticket!');
    expect(ticket.department_email_id).toBeNull();
    const brand = (await Brand.findByPk(ctx.brandId))!;
    expect(brand.default_email).toEqual(expect.stringContaining('@'));
    const data = created(await api.post(BASE, { ticket_id: ticket.id, user_id: (await f.operator()).id, text: 'x', subject: 's', to_address: ['a@example.com'] }));
    expect(data.extra.from_address).toBe(brand.default_email);
  });

  it('drafts; a sent forward cannot be edited, a draft can', async () => {
    const ticket = await f.ticket();
    const op = await f.operator();
    const draft = created(await api.post(BASE, { ticket_id: ticket.id, user_id: op.id, text: 'draft', subject: 's', to_address: ['a@example.com'], is_draft: 1 }));
    expect(draft.is_draft).toBe(1);
    expect(expectSuccess(await api.put(`/api/ticket/message/${draft.id}`, { text: 'better draft' }), 'Successfully updated the message!').text).toBe('better draft');
    const sent = created(await api.post(BASE, { ticket_id: ticket.id, user_id: op.id, text: 'sent', subject: 's', to_address: ['a@example.com'] }));
    expectError(await api.put(`/api/ticket/message/${sent.id}`, { text: 'changed' }), 422, 'There was an error updating the message.');
    // Pinning is not a change of what was sent.
    expect(expectSuccess(await api.put(`/api/ticket/message/${sent.id}`, { pinned: 1 }), 'Successfully updated the message!').pinned).toBe(1);
  });

  it('refuses a trashed ticket (its mail would never go out) and writes nothing; a draft is kept; restored, it forwards', async () => {
    const ticket = await f.ticket();
    const op = await f.operator();
    expect((await api.del(`/api/ticket/ticket/${ticket.id}`)).body).toEqual({ status: 'success', message: 'Successfully moved the ticket to trash!', data: null });
    const count = await TicketMessage.count({ where: { ticket_id: ticket.id } });
    const seen = events.length;
    const body = { ticket_id: ticket.id, user_id: op.id, text: 'x', subject: 's', to_address: ['vendor@example.com'] };
    expectError(await api.post(BASE, body), 422, `The ticket #${ticket.number} is in the trash: restore it before forwarding it.`);
    expect(await TicketMessage.count({ where: { ticket_id: ticket.id } })).toBe(count);
    expect(events.slice(seen).filter((e) => e.name === 'message.forwarded')).toEqual([]);
    // A draft mails nothing: kept, as a note on a trashed ticket is.
    expect(created(await api.post(BASE, { ...body, is_draft: 1 })).is_draft).toBe(1);
    expectSuccess(await api.post(`/api/ticket/ticket/${ticket.id}/restore`), 'Successfully restored the ticket!');
    const sent = created(await api.post(BASE, body));
    expect(events.filter((e) => e.name === 'message.forwarded').map((e) => e.payload.messageId)).toContain(sent.id);
  });

  it('needs an operator, the ticket, text, subject and at least one recipient; writes nothing otherwise', async () => {
    const ticket = await f.ticket();
    const op = await f.operator();
    const count = await TicketMessage.count({ where: { ticket_id: ticket.id } });
    const body = { ticket_id: ticket.id, user_id: op.id, text: 'x', subject: 's', to_address: ['a@example.com'] };
    expectError(await api.post(BASE, { ...body, user_id: ticket.user_id }), 422, 'The selected user id is invalid.');
    expectError(await api.post(BASE, { ...body, ticket_id: 999999999 }), 422, 'The selected ticket id is invalid.');
    expectError(await api.post(BASE, { ...body, subject: undefined }), 422, 'The subject field is required.');
    expectError(await api.post(BASE, { ...body, text: undefined }), 422, 'The text field is required.');
    expectError(await api.post(BASE, { ...body, to_address: undefined }), 422, 'The to address field is required when none of cc address / bcc address are present.');
    expectError(await api.post(BASE, { ...body, to_address: ['nope'] }), 422, 'The to address.0 must be a valid email address.');
    expectError(await api.post(BASE, { ...body, attachment: [{ filename: 'x.exe', contents: b64('MZ') }] }), 422, /^The attachment\.0\.filename must be a file of type: /);
    expect(await TicketMessage.count({ where: { ticket_id: ticket.id } })).toBe(count);
  });
});
