/**
 * Tickets: create, show, update, trash and merge through the API, and the events they emit.
 * Lists and filters: ticket-list.test.ts; numbers: ticket-number.test.ts.
 */
import {
  CustomField, CustomFieldDepartment, Organisation, SlaPlan, SlaPlanTarget, Ticket, TicketAttachment, TicketMessage, TicketTag, User,
  UserEmail,
} from '../../src/db/models';
import { countQueries, sequelize } from '../../src/db/sequelize';
import { statusInUse } from '../../src/ticket/status';
import { useApi, newEmail, nowSec, unique } from '../helpers/app';
import { expectDeleted, expectError, expectList, expectNotFound, expectSuccess } from '../helpers/envelope';
import {
  TICKET_KEYS, USER_SUMMARY_KEYS, b64, captureEvents, ids, ticketContext, ticketFactories, type TicketContext,
} from './ticketSupport';

const api = useApi();
const BASE = '/api/ticket/ticket';
let ctx: TicketContext;
beforeAll(async () => { ctx = await ticketContext(); });
const f = ticketFactories(api, () => ctx);
const events = captureEvents();
const eventsOf = (name: string, ticketId: number) => events.filter((e) => e.name === name && e.payload.ticketId === ticketId);

const created = (res: any) => expectSuccess(res, 'Successfully created new ticket!');
const updated = (res: any) => expectSuccess(res, 'Successfully updated the ticket!');
const show = async (id: number) => expectSuccess(await api.get(`${BASE}/${id}`));

describe('POST /api/ticket/ticket', () => {
  it('creates a ticket with its first message and every field of the spec', async () => {
    const user = await f.user();
    const before = nowSec();
    const data = created(await api.post(BASE, f.body({ user: user.id, subject: 'Printer on fire', text: 'Flames everywhere.' })));
    expect(Object.keys(data).sort()).toEqual([...TICKET_KEYS].sort());
    expect(data).toMatchObject({
      department_id: ctx.departmentId, brand_id: ctx.brandId, user_id: user.id, status_id: ctx.openStatus, priority_id: ctx.priorityId,
      sla_plan_id: null, subject: 'Printer on fire', due_time: null, resolved_time: null, cc: [], locked: 0, merged: 0, internal: 0,
      deleted_at: null, merged_into_id: null, tags: [], assigned: [], watching: [], customfields: [], linked: [], slaplan: null,
    });
    expect(data.number).toMatch(/^\d{7}$/);
    expect(data.token).toMatch(/^[0-9a-f]{40}$/);
    expect(data.created_at).toBeGreaterThanOrEqual(before);
    expect(data.frontend_url).toBe(`http://127.0.0.1:3000/tickets/view/${data.number}?token=${data.token}`);
    expect(data.operator_url).toBe(`http://127.0.0.1:3000/admin/ticket/view/${data.id}`);
    expect(data.channel).toMatchObject({ name: 'API', class: 'ApiChannel', enabled: 1 });
    expect(data.channel_id).toBe(data.channel.id);
    expect(Object.keys(data.user).sort()).toEqual([...USER_SUMMARY_KEYS].sort());
    expect(data.user).toMatchObject({ id: user.id, email: user.email, formatted_name: 'Uma User' });
    expect(data.department).toMatchObject({ id: ctx.departmentId, name: 'General Enquiries', parent: null, parent_id: null });
    expect(data.department.email_templates).toHaveProperty('user_ticket_opened');
    expect(data.status).toMatchObject({ id: ctx.openStatus, name: 'Open', translations: [] });
    expect(data.priority).toMatchObject({ id: ctx.priorityId, name: 'Low' });
    // The department's address of the brand.
    expect(data.department_email_id).toEqual(expect.any(Number));

    const messages = await TicketMessage.findAll({ where: { ticket_id: data.id } });
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatchObject({ user_id: user.id, by: 1, type: 0, text: 'Flames everywhere.', is_draft: 0, channel_id: data.channel_id });
    expect(data.last_reply_time).toBe(messages[0].created_at);
  });

  it('emits ticket.created with the first message and the mail flags, in the transaction', async () => {
    const data = await f.ticket({ send_user_email: 0, send_operators_email: 1 });
    const message = (await TicketMessage.findOne({ where: { ticket_id: data.id } }))!;
    expect(eventsOf('ticket.created', data.id)).toEqual([{
      name: 'ticket.created', inTransaction: true,
      payload: {
        ticketId: data.id, messageId: message.id, sendUserEmail: false, sendOperatorsEmail: true,
        audit: expect.objectContaining({ action: 'created', changes: expect.objectContaining({ status_id: { before: null, after: data.status_id } }) }),
      },
    }]);
    // The first message is part of ticket.created, not a message.created of its own.
    expect(eventsOf('message.created', data.id)).toEqual([]);
    const defaults = await f.ticket({ send_user_email: undefined, send_operators_email: undefined });
    expect(eventsOf('ticket.created', defaults.id)[0].payload).toMatchObject({ sendUserEmail: true, sendOperatorsEmail: true });
  });

  it('requires department, status, priority, subject and text, and a user', async () => {
    for (const key of ['department', 'status', 'priority', 'subject', 'text']) {
      expectError(await api.post(BASE, f.body({ user: (await f.user()).id, [key]: undefined })), 422, `The ${key} field is required.`);
    }
    expectError(await api.post(BASE, f.body()), 422, 'The user email field is required when user is not present.');
  });

  it('refuses unknown ids and ids of the wrong kind, writing nothing', async () => {
    const user = await f.user();
    const operator = await f.operator();
    const count = await Ticket.count();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ user: 999999999 }, 'The selected user is invalid.'],
      [{ user: operator.id }, 'The selected user is invalid.'],
      [{ user: user.id, department: 999999 }, 'The selected department is invalid.'],
      [{ user: user.id, status: 999999 }, 'The selected status is invalid.'],
      [{ user: user.id, priority: 999999 }, 'The selected priority is invalid.'],
      [{ user: user.id, brand: 999999 }, 'The selected brand is invalid.'],
      [{ user: user.id, tag: [999999] }, 'The selected tag.0 is invalid.'],
      [{ user: user.id, assignedto: [operator.id, user.id] }, 'The selected assignedto.1 is invalid.'],
      [{ user: user.id, watching: [user.id] }, 'The selected watching.0 is invalid.'],
      [{ user: user.id, cc: ['not-an-address'] }, 'The cc.0 must be a valid email address.'],
      [{ user: user.id, user_ip_address: '300.1.1.1' }, 'The user ip address must be a valid IP address.'],
      [{ user: user.id, created_at: nowSec() + 86400 }, 'The created at must be a date before or equal to now.'],
      [{ user: user.id, internal: 1 }, 'The selected user is invalid.'],
      [{ on_behalf_of: operator.id }, 'The selected on behalf of is invalid.'],
    ];
    for (const [body, message] of cases) expectError(await api.post(BASE, f.body(body)), 422, message);
    expect(await Ticket.count()).toBe(count);
  });

  it('needs a department assigned to the ticket\'s brand, and a priority offered in the department', async () => {
    const user = await f.user();
    const otherBrand = await (await import('../../src/db/models')).Brand.create({ name: unique('Brand') });
    const elsewhere = await f.department({}, otherBrand.id);
    expectError(await api.post(BASE, f.body({ user: user.id, department: elsewhere.id })), 422, 'The selected department is invalid.');
    const offered = expectSuccess(await api.post('/api/ticket/priority', { name: unique('Prio'), depts: [elsewhere.id] }), 'Successfully created new priority!');
    expectError(await api.post(BASE, f.body({ user: user.id, priority: offered.id })), 422, 'The selected priority is invalid.');
    // In its own brand it is fine, with a user of that brand.
    const theirs = await f.user({ brand_id: otherBrand.id });
    const ok = created(await api.post(BASE, f.body({ user: theirs.id, brand: otherBrand.id, department: elsewhere.id, priority: offered.id })));
    expect(ok).toMatchObject({ brand_id: otherBrand.id, department_id: elsewhere.id, priority_id: offered.id });
    // A user of another brand is not a user of this one.
    expectError(await api.post(BASE, f.body({ user: theirs.id })), 422, 'The selected user is invalid.');
  });

  it('user_email finds the brand\'s user (also by an additional address, case-insensitively) and never changes them', async () => {
    const user = await f.user({ firstname: 'Keep', lastname: 'Me' });
    const byPrimary = created(await api.post(BASE, f.body({ user_email: user.email.toUpperCase(), user_firstname: 'Other' })));
    expect(byPrimary.user_id).toBe(user.id);
    const extra = newEmail('extra');
    await UserEmail.create({ user_id: user.id, email: extra });
    expect(created(await api.post(BASE, f.body({ user_email: extra }))).user_id).toBe(user.id);
    await user.reload();
    expect([user.firstname, user.lastname]).toEqual(['Keep', 'Me']);
  });

  it('user_email creates a user (no password) with the names and a new organisation', async () => {
    const email = newEmail('new');
    const org = unique('Org');
    const data = created(await api.post(BASE, f.body({ user_email: email, user_firstname: 'Nina', user_lastname: 'New', user_organisation: org })));
    const user = (await User.findByPk(data.user_id))!;
    expect(user).toMatchObject({ type: 'user', brand_id: ctx.brandId, email, firstname: 'Nina', lastname: 'New', password: null });
    expect((await Organisation.findByPk(user.organisation_id!))!.name).toBe(org);
    expect(data.user).toMatchObject({ id: user.id, formatted_name: 'Nina New' });
    // Tickets for one new address at once: one user.
    const another = newEmail('race');
    const results = await Promise.all(Array.from({ length: 5 }, () => api.post(BASE, f.body({ user_email: another }))));
    const owners = new Set(results.map((r) => created(r).user_id));
    expect(owners.size).toBe(1);
    expect(await User.count({ where: { email: another } })).toBe(1);
  });

  it('on_behalf_of: the operator writes the first message, the user owns the ticket', async () => {
    const user = await f.user();
    const operator = await f.operator();
    const data = created(await api.post(BASE, f.body({ user: operator.id, on_behalf_of: user.id })));
    expect(data.user_id).toBe(user.id);
    const message = (await TicketMessage.findOne({ where: { ticket_id: data.id } }))!;
    expect(message).toMatchObject({ user_id: operator.id, by: 0 });
  });

  it('on_behalf_of with user_email or internal is refused, not one of them dropped', async () => {
    const user = await f.user();
    const operator = await f.operator();
    const email = newEmail('behalf');
    const before = await Ticket.count();
    expectError(await api.post(BASE, f.body({ user: operator.id, on_behalf_of: user.id, user_email: email })), 422,
      'The on behalf of field prohibits user email from being present.');
    expectError(await api.post(BASE, f.body({ user: operator.id, on_behalf_of: user.id, internal: 1 })), 422,
      'The on behalf of field is prohibited when internal is 1.');
    expect(await Ticket.count()).toBe(before);
    expect(await User.count({ where: { email } })).toBe(0);
  });

  it('internal tickets belong to an operator', async () => {
    const operator = await f.operator();
    const data = created(await api.post(BASE, f.body({ user: operator.id, internal: 1 })));
    expect(data).toMatchObject({ internal: 1, user_id: operator.id });
    expect((await TicketMessage.findOne({ where: { ticket_id: data.id } }))!.by).toBe(0);
    expectError(await api.post(BASE, f.body({ internal: 1 })), 422, 'The user field is required when internal is 1.');
  });

  it('takes tags, assigned and watching operators, cc, custom fields, ip, created_at and attachments', async () => {
    const user = await f.user();
    const [a, b] = [await f.operator(), await f.operator()];
    const tags = await TicketTag.bulkCreate([{ name: unique('tag') }, { name: unique('tag') }]);
    const field = await CustomField.create({ kind: 'ticket', name: unique('Order number'), type: 8 });
    const at = nowSec() - 3600;
    const data = created(await api.post(BASE, f.body({
      user: user.id, tag: ids(tags), assignedto: [a.id], watching: [a.id, b.id], cc: [' Boss@Example.com', 'boss@example.com', 'x@example.org'],
      customfield: { [field.id]: 'A-1234' }, user_ip_address: '203.0.113.9', created_at: at,
      attachment: [{ filename: 'log.txt', contents: b64('line 1\nline 2\n') }],
    })));
    expect(data.tags.map((t: any) => [t.id, t.name, t.pivot])).toEqual(tags.map((t) => [t.id, t.name, { ticket_id: data.id, tag_id: t.id }]));
    expect(data.assigned).toEqual([{ id: a.id, firstname: 'Otto', lastname: 'Operator', email: a.email, avatar: null, formatted_name: 'Otto Operator' }]);
    expect(ids(data.watching)).toEqual([a.id, b.id]);
    expect(data.cc).toEqual(['boss@example.com', 'x@example.org']);
    expect(data.customfields).toEqual([expect.objectContaining({ field_id: field.id, ticket_id: data.id, value: 'A-1234' })]);
    expect(data.created_at).toBe(at);
    const message = (await TicketMessage.findOne({ where: { ticket_id: data.id } }))!;
    expect(message).toMatchObject({ created_at: at, user_ip_address: '203.0.113.9' });
    expect(await TicketAttachment.findAll({ where: { ticket_id: data.id } })).toEqual([expect.objectContaining({ message_id: message.id, original_name: 'log.txt' })]);
  });

  it('custom fields follow the department: another department\'s field is refused, its required field not asked for', async () => {
    const user = await f.user();
    const other = await f.department();
    const theirs = await CustomField.create({ kind: 'ticket', name: unique('Theirs'), type: 8, required: 1 });
    await CustomFieldDepartment.create({ field_id: theirs.id, department_id: other.id });
    expectError(await api.post(BASE, f.body({ user: user.id, customfield: { [theirs.id]: 'x' } })), 422, `The selected customfield.${theirs.id} is invalid.`);
    created(await api.post(BASE, f.body({ user: user.id })));
    expectError(await api.post(BASE, f.body({ user: user.id, department: other.id })), 422, `The customfield.${theirs.id} field is required.`);
    await theirs.destroy();
  });

  it('assigns the department\'s default operator when no assignedto is sent', async () => {
    const operator = await f.operator();
    const dept = await f.department({ default_assignedto: operator.id });
    const data = created(await api.post(BASE, f.body({ user: (await f.user()).id, department: dept.id })));
    expect(ids(data.assigned)).toEqual([operator.id]);
    expect(created(await api.post(BASE, f.body({ user: (await f.user()).id, department: dept.id, assignedto: '' }))).assigned).toEqual([]);
  });

  it('an SLA plan sets the due times from the creation (beyond the spec)', async () => {
    const plan = await SlaPlan.create({ name: unique('Plan') });
    await SlaPlanTarget.create({ plan_id: plan.id, priority_id: ctx.priorityId, first_reply: 60, resolution: 480 });
    const at = nowSec() - 100;
    const data = created(await api.post(BASE, f.body({ user: (await f.user()).id, sla_plan: plan.id, created_at: at })));
    expect(data).toMatchObject({ sla_plan_id: plan.id, reply_due_time: at + 3600, resolve_due_time: at + 8 * 3600, due_time: at + 3600 });
    expect(data.slaplan).toMatchObject({ id: plan.id, name: plan.name, targets: [{ priority_id: ctx.priorityId, first_reply: 60, resolution: 480 }] });
  });
});

describe('GET /api/ticket/ticket/{id}', () => {
  it('shows a ticket, 404 for an unknown one', async () => {
    const data = await f.ticket();
    const shown = await show(data.id);
    expect(shown).toEqual({ ...data, updated_at: shown.updated_at });
    expectNotFound(await api.get(`${BASE}/999999999`), 'ticket');
    expectNotFound(await api.get(`${BASE}/abc`), 'ticket');
  });

  it('presents the status with its translations, or in `lang`', async () => {
    const status = expectSuccess(await api.post('/api/ticket/status', { name: unique('Waiting'), 'name:fr': 'En attente' }), 'Successfully created new status!');
    const data = await f.ticket({ status: status.id });
    expect((await show(data.id)).status.translations).toEqual([{ status_id: status.id, name: 'En attente', locale: 'fr' }]);
    expect(expectSuccess(await api.get(`${BASE}/${data.id}`, { lang: 'fr' })).status.name).toBe('En attente');
  });
});

describe('PUT /api/ticket/ticket/{id}', () => {
  it('changes subject, status, priority and user, and emits ticket.updated with the changes', async () => {
    const data = await f.ticket();
    const user = await f.user();
    const high = (await (await import('../../src/db/models')).TicketPriority.findOne({ where: { name: 'High' } }))!;
    const { result, queries } = await countQueries(async () => api.put(`${BASE}/${data.id}`, { subject: 'New subject', status: ctx.otherStatus, priority: high.id, user: user.id }));
    const res = updated(result);
    expect(res).toMatchObject({ subject: 'New subject', status_id: ctx.otherStatus, priority_id: high.id, user_id: user.id });
    // The new user is read once in the write (checked and kept for what depends on it).
    const written = queries.slice(queries.findIndex((q) => /START TRANSACTION/.test(q)), queries.findIndex((q) => /COMMIT/.test(q)));
    expect(written.filter((q) => /^(Executing \([^)]*\): )?SELECT .* FROM `users`/.test(q))).toHaveLength(1);
    expect(res.updated_at).toBeGreaterThanOrEqual(data.updated_at);
    expect(eventsOf('ticket.updated', data.id)).toEqual([{
      name: 'ticket.updated', inTransaction: true,
      payload: {
        ticketId: data.id, changes: ['user', 'subject', 'status', 'priority'], newlyAssigned: [],
        audit: expect.objectContaining({ action: 'updated', changes: expect.objectContaining({ subject: { before: data.subject, after: 'New subject' } }) }),
      },
    }]);
    // Nothing changes: no event.
    updated(await api.put(`${BASE}/${data.id}`, { subject: 'New subject' }));
    expect(eventsOf('ticket.updated', data.id)).toHaveLength(1);
  });

  it('a new user gets the ticket a new token (the one mailed to the former user no longer fits); other changes keep it', async () => {
    const data = created(await api.post(BASE, f.body({ user: (await f.user()).id })));
    const kept = updated(await api.put(`${BASE}/${data.id}`, { subject: 'Still theirs', status: ctx.otherStatus, cc: ['x@example.org'] }));
    expect(kept.token).toBe(data.token);
    // The same user again is no change.
    expect(updated(await api.put(`${BASE}/${data.id}`, { user: data.user_id })).token).toBe(data.token);
    const next = await f.user();
    const moved = updated(await api.put(`${BASE}/${data.id}`, { user: next.id }));
    expect(moved.token).toMatch(/^[0-9a-f]{40}$/);
    expect(moved.token).not.toBe(data.token);
    expect(moved.frontend_url).toBe(`http://127.0.0.1:3000/tickets/view/${data.number}?token=${moved.token}`);
    expect((await Ticket.findByPk(data.id))!.token).toBe(moved.token);
    expect((await show(data.id)).token).toBe(moved.token);
  });

  it('tag, assignedto, watching and cc replace; newly assigned operators are in the event', async () => {
    const [a, b, c] = [await f.operator(), await f.operator(), await f.operator()];
    const tags = await TicketTag.bulkCreate([{ name: unique('tag') }, { name: unique('tag') }]);
    const data = await f.ticket({ tag: [tags[0].id], assignedto: [a.id, b.id], watching: [a.id], cc: ['one@example.com'] });
    const res = updated(await api.put(`${BASE}/${data.id}`, { tag: [tags[1].id], assignedto: [b.id, c.id], watching: [c.id], cc: ['two@example.com'] }));
    expect(ids(res.tags)).toEqual([tags[1].id]);
    expect(ids(res.assigned)).toEqual([b.id, c.id]);
    expect(ids(res.watching)).toEqual([c.id]);
    expect(res.cc).toEqual(['two@example.com']);
    const event = eventsOf('ticket.updated', data.id).pop()!;
    expect(event.payload).toEqual({
      ticketId: data.id, changes: ['cc', 'tag', 'assignedto', 'watching'], newlyAssigned: [c.id],
      audit: expect.objectContaining({ changes: expect.objectContaining({ cc: { before: ['one@example.com'], after: ['two@example.com'] } }) }),
    });
    // An empty value clears.
    const cleared = updated(await api.put(`${BASE}/${data.id}`, { tag: '', assignedto: '', cc: '' }));
    expect([cleared.tags, cleared.assigned, cleared.cc]).toEqual([[], [], []]);
  });

  it('department must belong to the brand; a brand change needs a department of the new brand', async () => {
    const data = await f.ticket();
    const own = await f.department();
    const moved = updated(await api.put(`${BASE}/${data.id}`, { department: own.id }));
    expect(moved.department_id).toBe(own.id);
    // The address follows the department.
    const ownEmail = (await (await import('../../src/db/models')).DepartmentEmail.findOne({ where: { department_id: own.id } }))!;
    expect(moved.department_email_id).toBe(ownEmail.id);
    const brand = await (await import('../../src/db/models')).Brand.create({ name: unique('Brand') });
    const theirs = await f.department({}, brand.id);
    expectError(await api.put(`${BASE}/${data.id}`, { department: theirs.id }), 422, 'There was an error updating the ticket.');
    expectError(await api.put(`${BASE}/${data.id}`, { brand: brand.id }), 422, 'There was an error updating the ticket.');
    expectError(await api.put(`${BASE}/${data.id}`, { department_email: ownEmail.id, brand: brand.id, department: theirs.id }), 422, 'There was an error updating the ticket.');
    // With a user of the new brand (the next test: without one it is refused).
    const customer = await f.user({ brand_id: brand.id });
    const rebranded = updated(await api.put(`${BASE}/${data.id}`, { brand: brand.id, department: theirs.id, user: customer.id }));
    expect(rebranded).toMatchObject({ brand_id: brand.id, department_id: theirs.id, user_id: customer.id });
    expect(rebranded.department_email_id).not.toBe(ownEmail.id);
    expectError(await api.put(`${BASE}/${data.id}`, { department: 999999 }), 422, 'The selected department is invalid.');
    // Nothing of a refused update stays.
    expect((await show(data.id)).department_id).toBe(theirs.id);
  });

  it('a brand change keeps a user of the new brand or names one; an internal ticket keeps its operator', async () => {
    const { Brand } = await import('../../src/db/models');
    const brand = await Brand.create({ name: unique('Brand') });
    const theirs = await f.department({}, brand.id);
    const data = await f.ticket();
    // The ticket's user is of the old brand: the move alone would leave a customer of another brand.
    expectError(await api.put(`${BASE}/${data.id}`, { brand: brand.id, department: theirs.id }), 422, 'There was an error updating the ticket.');
    expectError(await api.put(`${BASE}/${data.id}`, { brand: brand.id, department: theirs.id, user: data.user_id }), 422, 'There was an error updating the ticket.');
    // A user named with it must be of the new brand.
    expectError(await api.put(`${BASE}/${data.id}`, { brand: brand.id, department: theirs.id, user: (await f.user()).id }), 422, 'The selected user is invalid.');
    expect(await show(data.id)).toMatchObject({ brand_id: ctx.brandId, department_id: ctx.departmentId, user_id: data.user_id });
    const customer = await f.user({ brand_id: brand.id });
    expect(updated(await api.put(`${BASE}/${data.id}`, { brand: brand.id, department: theirs.id, user: customer.id })))
      .toMatchObject({ brand_id: brand.id, department_id: theirs.id, user_id: customer.id });
    // Its user is of the new brand: moving on within it needs no user.
    const again = await f.department({}, brand.id);
    expect(updated(await api.put(`${BASE}/${data.id}`, { department: again.id }))).toMatchObject({ brand_id: brand.id, user_id: customer.id });

    // An internal ticket's operator belongs to no brand: it moves with its operator.
    const operator = await f.operator();
    const internal = await f.ticket({ user: operator.id, internal: 1 });
    expect(updated(await api.put(`${BASE}/${internal.id}`, { brand: brand.id, department: theirs.id })))
      .toMatchObject({ brand_id: brand.id, department_id: theirs.id, user_id: operator.id, internal: 1 });
  });

  it('the priority must be offered in the ticket\'s (new) department, as on opening', async () => {
    const elsewhere = await f.department();
    const only = expectSuccess(await api.post('/api/ticket/priority', { name: unique('Prio'), depts: [elsewhere.id] }), 'Successfully created new priority!');
    const data = await f.ticket();
    expectError(await api.put(`${BASE}/${data.id}`, { priority: only.id }), 422, 'The selected priority is invalid.');
    expectError(await api.put(`${BASE}/${data.id}`, { priority: 999999 }), 422, 'The selected priority is invalid.');
    expect((await show(data.id)).priority_id).toBe(ctx.priorityId);
    // Moved with it to the department that offers it: fine.
    expect(updated(await api.put(`${BASE}/${data.id}`, { department: elsewhere.id, priority: only.id })))
      .toMatchObject({ department_id: elsewhere.id, priority_id: only.id });
    // Back to a department that does not offer the current priority: refused on `priority`, until one is sent with the move.
    expectError(await api.put(`${BASE}/${data.id}`, { department: ctx.departmentId }), 422, 'The selected priority is invalid.');
    expect(await show(data.id)).toMatchObject({ department_id: elsewhere.id, priority_id: only.id });
    expect(updated(await api.put(`${BASE}/${data.id}`, { department: ctx.departmentId, priority: ctx.priorityId })))
      .toMatchObject({ department_id: ctx.departmentId, priority_id: ctx.priorityId });
  });

  it('the ticket\'s own user is dropped from its CC list (a new list, or a new user who was on it)', async () => {
    const user = await f.user();
    const data = created(await api.post(BASE, f.body({ user: user.id, cc: [user.email.toUpperCase(), 'alice@example.com'] })));
    expect(data.cc).toEqual(['alice@example.com']);
    expect((await Ticket.findByPk(data.id))!.cc).toBe('["alice@example.com"]');
    expect(updated(await api.put(`${BASE}/${data.id}`, { cc: ['bob@example.com', user.email] })).cc).toEqual(['bob@example.com']);
    // The CC'd person becomes the ticket's user: off the list.
    const bob = await f.user({ email: newEmail('bob') });
    updated(await api.put(`${BASE}/${data.id}`, { cc: ['carol@example.com', bob.email] }));
    expect(updated(await api.put(`${BASE}/${data.id}`, { user: bob.id }))).toMatchObject({ user_id: bob.id, cc: ['carol@example.com'] });
    // Only the user's address: a list of it alone is empty.
    expect(updated(await api.put(`${BASE}/${data.id}`, { cc: [bob.email] })).cc).toEqual([]);
    // Found by address, too.
    const byAddress = created(await api.post(BASE, f.body({ user_email: user.email, cc: [user.email] })));
    expect([byAddress.user_id, byAddress.cc]).toEqual([user.id, []]);
  });

  it('link and unlink tickets (both ways)', async () => {
    const [a, b, c] = [await f.ticket(), await f.ticket(), await f.ticket()];
    expect(updated(await api.put(`${BASE}/${a.id}`, { link: [b.id, c.id] })).linked).toEqual([b.id, c.id]);
    expect((await show(b.id)).linked).toEqual([a.id]);
    expect(updated(await api.put(`${BASE}/${b.id}`, { unlink: [a.id] })).linked).toEqual([]);
    expect((await show(a.id)).linked).toEqual([c.id]);
    expectError(await api.put(`${BASE}/${a.id}`, { link: [a.id] }), 422, 'The selected link.0 is invalid.');
    expectError(await api.put(`${BASE}/${a.id}`, { link: [999999999] }), 422, 'The selected link.0 is invalid.');
    // A ticket merged into another is read-only and in no list: it cannot be linked.
    const [target, source] = [await f.ticket(), await f.ticket()];
    updated(await api.post(`${BASE}/${target.id}/merge`, { ids: [source.id] }));
    expectError(await api.put(`${BASE}/${a.id}`, { link: [b.id, source.id] }), 422, 'The selected link.1 is invalid.');
    expect((await show(a.id)).linked).toEqual([c.id]);
  });

  it('sla_plan recomputes the due times (0 clears); reply_due_time and resolve_due_time set them', async () => {
    const plan = await SlaPlan.create({ name: unique('Plan') });
    await SlaPlanTarget.create({ plan_id: plan.id, priority_id: ctx.priorityId, first_reply: 30, resolution: 120 });
    const data = await f.ticket();
    const withPlan = updated(await api.put(`${BASE}/${data.id}`, { sla_plan: plan.id }));
    expect(withPlan).toMatchObject({ sla_plan_id: plan.id, reply_due_time: data.created_at + 1800, resolve_due_time: data.created_at + 7200, due_time: data.created_at + 1800 });
    const set = updated(await api.put(`${BASE}/${data.id}`, { reply_due_time: 2000000000, resolve_due_time: 2100000000 }));
    expect(set).toMatchObject({ reply_due_time: 2000000000, resolve_due_time: 2100000000, due_time: 2000000000 });
    const cleared = updated(await api.put(`${BASE}/${data.id}`, { sla_plan: 0 }));
    expect(cleared).toMatchObject({ sla_plan_id: null, slaplan: null, reply_due_time: null, resolve_due_time: null, due_time: null });
    expectError(await api.put(`${BASE}/${data.id}`, { sla_plan: 999999 }), 422, 'The selected sla plan is invalid.');
  });

  it('customfield overwrites values; a locked field only with overwrite_customfield_values', async () => {
    const open = await CustomField.create({ kind: 'ticket', name: unique('Open field'), type: 8 });
    const locked = await CustomField.create({ kind: 'ticket', name: unique('Locked field'), type: 8, locked: 1 });
    const data = await f.ticket({ customfield: { [open.id]: 'one', [locked.id]: 'first' } });
    const value = (d: any, field: CustomField) => d.customfields.find((v: any) => v.field_id === field.id)?.value;
    const res = updated(await api.put(`${BASE}/${data.id}`, { customfield: { [open.id]: 'two', [locked.id]: 'second' } }));
    expect([value(res, open), value(res, locked)]).toEqual(['two', 'first']);
    const forced = updated(await api.put(`${BASE}/${data.id}`, { customfield: { [locked.id]: 'second' }, overwrite_customfield_values: 1 }));
    expect(value(forced, locked)).toBe('second');
  });

  it('locked closes the ticket with the resolved status; the status cannot say otherwise', async () => {
    const data = await f.ticket();
    const locked = updated(await api.put(`${BASE}/${data.id}`, { locked: 1 }));
    expect(locked).toMatchObject({ locked: 1, status_id: ctx.resolvedStatus });
    expect(locked.resolved_time).toEqual(expect.any(Number));
    expect(eventsOf('ticket.updated', data.id).pop()!.payload.changes).toEqual(['locked', 'status']);
    expectError(await api.put(`${BASE}/${data.id}`, { locked: 1, status: ctx.openStatus }), 422, 'There was an error updating the ticket.');
    // Unlocking does not reopen.
    expect(updated(await api.put(`${BASE}/${data.id}`, { locked: 0 }))).toMatchObject({ locked: 0, status_id: ctx.resolvedStatus });
    // Reopening by status clears resolved_time and stamps reopened_time.
    const reopened = updated(await api.put(`${BASE}/${data.id}`, { status: ctx.openStatus }));
    expect(reopened).toMatchObject({ resolved_time: null, reopened_time: expect.any(Number) });
  });

  it('a locked ticket stays closed: another status takes locked 0 with it', async () => {
    const data = await f.ticket();
    updated(await api.put(`${BASE}/${data.id}`, { locked: 1 }));
    expectError(await api.put(`${BASE}/${data.id}`, { status: ctx.openStatus }), 422, 'There was an error updating the ticket.');
    expect(await show(data.id)).toMatchObject({ locked: 1, status_id: ctx.resolvedStatus });
    // The status it has, and other fields, still change as they did.
    expect(updated(await api.put(`${BASE}/${data.id}`, { status: ctx.resolvedStatus, subject: 'Still locked' }))).toMatchObject({ locked: 1, subject: 'Still locked' });
    expect(updated(await api.put(`${BASE}/${data.id}`, { locked: 0, status: ctx.openStatus }))).toMatchObject({ locked: 0, status_id: ctx.openStatus, resolved_time: null });
  });

  it('404 before 422, and unknown ids are refused', async () => {
    expectNotFound(await api.put(`${BASE}/999999999`, { status: 'x' }), 'ticket');
    const data = await f.ticket();
    expectError(await api.put(`${BASE}/${data.id}`, { status: 999999 }), 422, 'The selected status is invalid.');
    expectError(await api.put(`${BASE}/${data.id}`, { user: (await f.operator()).id }), 422, 'The selected user is invalid.');
  });
});

describe('DELETE /api/ticket/ticket/{id}', () => {
  it('moves the ticket to the trash: left out of lists unless trashed=1, still shown', async () => {
    const data = await f.ticket();
    expect({ status: (await api.del(`${BASE}/${data.id}`)).status }).toEqual({ status: 200 });
    const shown = await show(data.id);
    expect(shown.deleted_at).toEqual(expect.any(Number));
    expect(ids(expectList(await api.get(BASE, { user: data.user_id })))).toEqual([]);
    expect(ids(expectList(await api.get(BASE, { user: data.user_id, trashed: 1 })))).toEqual([data.id]);
    expect(eventsOf('ticket.trashed', data.id)).toEqual([{ name: 'ticket.trashed', inTransaction: true, payload: { ticketId: data.id, audit: expect.objectContaining({ action: 'trashed' }) } }]);
    // Again: it stays in the trash as it was.
    const again = await api.del(`${BASE}/${data.id}`);
    expect(again.body).toEqual({ status: 'success', message: 'Successfully moved the ticket to trash!', data: null });
    expect((await show(data.id)).deleted_at).toBe(shown.deleted_at);
    expect(eventsOf('ticket.trashed', data.id)).toHaveLength(1);
    expectNotFound(await api.del(`${BASE}/999999999`), 'ticket');
  });

  it('POST /{id}/restore takes a ticket out of the trash, as it was (beyond the spec)', async () => {
    const data = await f.ticket();
    await api.del(`${BASE}/${data.id}`);
    const restored = expectSuccess(await api.post(`${BASE}/${data.id}/restore`, {}), 'Successfully restored the ticket!');
    expect(restored).toMatchObject({ id: data.id, deleted_at: null, status_id: data.status_id, subject: data.subject });
    expect(ids(expectList(await api.get(BASE, { user: data.user_id })))).toEqual([data.id]);
    expect(ids(expectList(await api.get(BASE, { user: data.user_id, trashed: 1 })))).toEqual([]);
    expect(eventsOf('ticket.restored', data.id)).toEqual([{
      name: 'ticket.restored', inTransaction: true,
      payload: { ticketId: data.id, audit: expect.objectContaining({ action: 'restored', changes: { deleted_at: { before: expect.any(Number), after: null } } }) },
    }]);
    // A ticket not in the trash: nothing changes, no event.
    expect(expectSuccess(await api.post(`${BASE}/${data.id}/restore`, {}), 'Successfully restored the ticket!')).toMatchObject({ deleted_at: null });
    expect(eventsOf('ticket.restored', data.id)).toHaveLength(1);
    expectNotFound(await api.post(`${BASE}/999999999/restore`, {}), 'ticket');
  });

  it('a ticket merged into another is not trashed: its target is', async () => {
    const [target, source] = [await f.ticket(), await f.ticket()];
    updated(await api.post(`${BASE}/${target.id}/merge`, { ids: [source.id] }));
    expectError(await api.del(`${BASE}/${source.id}`), 422, 'A ticket merged into another cannot be moved to the trash: trash the ticket it was merged into.');
    expect(await show(source.id)).toMatchObject({ deleted_at: null, merged_into_id: target.id });
    expect(eventsOf('ticket.trashed', source.id)).toEqual([]);
  });

  it('a status that a ticket has cannot be deleted', async () => {
    const status = expectSuccess(await api.post('/api/ticket/status', { name: unique('Busy') }), 'Successfully created new status!');
    const data = await f.ticket({ status: status.id });
    expectError(await api.del(`/api/ticket/status/${status.id}`), 422, 'The status cannot be deleted because tickets have it: give them another status first.');
    await sequelize().transaction(async (t) => expect(await statusInUse(status.id, t)).toMatch(/tickets have it/));
    updated(await api.put(`${BASE}/${data.id}`, { status: ctx.openStatus }));
    expectDeleted(await api.del(`/api/ticket/status/${status.id}`), 'status');
  });
});

describe('POST /api/ticket/ticket/{id}/merge', () => {
  it('moves messages and attachments to the target and marks both sides', async () => {
    const user = await f.user();
    const tags = await TicketTag.bulkCreate([{ name: unique('tag') }, { name: unique('tag') }]);
    const op = await f.operator();
    const target = await f.ticket({ user: user.id, tag: [tags[0].id], cc: ['a@example.com'] });
    const source = await f.ticket({ user: user.id, tag: [tags[1].id], watching: [op.id], cc: ['b@example.com'], attachment: [{ filename: 'x.txt', contents: b64('x') }] });
    const sourceMessages = await TicketMessage.findAll({ where: { ticket_id: source.id } });
    const res = updated(await api.post(`${BASE}/${target.id}/merge`, { ids: [source.id] }));
    expect(res).toMatchObject({ id: target.id, merged: 1, merged_into_id: null, cc: ['a@example.com', 'b@example.com'] });
    expect(ids(res.tags)).toEqual(ids(tags));
    expect(ids(res.watching)).toEqual([op.id]);
    const moved = await TicketMessage.findAll({ where: { id: ids(sourceMessages) } });
    expect(moved.map((m) => [m.ticket_id, m.original_ticket_id])).toEqual([[target.id, source.id]]);
    expect((await TicketAttachment.findOne({ where: { message_id: sourceMessages[0].id } }))!.ticket_id).toBe(target.id);
    expect(await show(source.id)).toMatchObject({ merged: 1, merged_into_id: target.id });
    expect(eventsOf('ticket.merged', target.id)).toEqual([{ name: 'ticket.merged', inTransaction: true, payload: {
      ticketId: target.id, mergedIds: [source.id], audit: expect.objectContaining({ action: 'merged', changes: expect.objectContaining({ merged_ids: { before: null, after: [source.id] } }) }),
    } }]);
    // The source leaves the lists; its number finds the target.
    expect(ids(expectList(await api.get(BASE, { user: user.id })))).toEqual([target.id]);
    expect(ids(expectList(await api.get(BASE, { number: source.number })))).toEqual([target.id]);
    // A reply to the source goes to the target.
    const reply = await f.message(source);
    expect(reply.ticket_id).toBe(target.id);
    // The source is read-only.
    expectError(await api.put(`${BASE}/${source.id}`, { subject: 'x' }), 422, 'There was an error updating the ticket.');
  });

  it('the sources\' customers join the target\'s CC list, so they can still reply and get its mail; the target\'s user never does', async () => {
    const [owner, other] = [await f.user(), await f.user()];
    const target = await f.ticket({ user: owner.id });
    const theirs = await f.ticket({ user: other.id, cc: [owner.email] });
    const mine = await f.ticket({ user: owner.id });
    const res = updated(await api.post(`${BASE}/${target.id}/merge`, { ids: [theirs.id, mine.id] }));
    expect(res.cc).toEqual([other.email.toLowerCase()]);
    const reply = await f.message(target, { user_id: other.id });
    expect(reply).toMatchObject({ ticket_id: target.id, user_id: other.id });
  });

  it('merging into a ticket that was merged before carries the older sources along', async () => {
    const [a, b, c] = [await f.ticket(), await f.ticket(), await f.ticket()];
    updated(await api.post(`${BASE}/${b.id}/merge`, { ids: [a.id] }));
    updated(await api.post(`${BASE}/${c.id}/merge`, { ids: [b.id] }));
    expect((await show(a.id)).merged_into_id).toBe(c.id);
    expect(ids(expectList(await api.get(BASE, { number: a.number })))).toEqual([c.id]);
  });

  it('refuses the target itself, unknown, trashed, merged and other brands\' tickets as ids.<n>', async () => {
    const target = await f.ticket();
    const good = await f.ticket();
    const trashed = await f.ticket();
    await api.del(`${BASE}/${trashed.id}`);
    const merged = await f.ticket();
    updated(await api.post(`${BASE}/${good.id}/merge`, { ids: [merged.id] }));
    const brand = await (await import('../../src/db/models')).Brand.create({ name: unique('Brand') });
    const dept = await f.department({}, brand.id);
    const foreign = await f.ticket({ brand: brand.id, department: dept.id, user: (await f.user({ brand_id: brand.id })).id });
    const internal = await f.ticket({ user: (await f.operator()).id, internal: 1 });
    for (const bad of [target.id, 999999999, trashed.id, merged.id, foreign.id, internal.id]) {
      expectError(await api.post(`${BASE}/${target.id}/merge`, { ids: [good.id, bad] }), 422, 'The selected ids.1 is invalid.');
    }
    expectError(await api.post(`${BASE}/${target.id}/merge`, {}), 422, 'The ids field is required.');
    expectNotFound(await api.post(`${BASE}/999999999/merge`, { ids: [good.id] }), 'ticket');
    // Nothing of the refused merges happened.
    expect(await show(good.id)).toMatchObject({ merged: 1, merged_into_id: null });
    expect(await show(internal.id)).toMatchObject({ merged: 0, merged_into_id: null });
    // Nor an internal target with a customer's ticket: the customer's conversation would join the operators' notes.
    expectError(await api.post(`${BASE}/${internal.id}/merge`, { ids: [good.id] }), 422, 'The selected ids.0 is invalid.');
    expect(await show(good.id)).toMatchObject({ merged_into_id: null });
    expect(await show(internal.id)).toMatchObject({ merged: 0, cc: [] });
  });

  it('the sources\' links become the target\'s; links between the target and its sources go', async () => {
    const [target, source, other, another] = [await f.ticket(), await f.ticket(), await f.ticket(), await f.ticket()];
    updated(await api.put(`${BASE}/${target.id}`, { link: [source.id, another.id] }));
    updated(await api.put(`${BASE}/${source.id}`, { link: [other.id, another.id] }));
    expect(updated(await api.post(`${BASE}/${target.id}/merge`, { ids: [source.id] })).linked).toEqual([other.id, another.id].sort((x, y) => x - y));
    expect((await show(other.id)).linked).toEqual([target.id]);
    expect((await show(another.id)).linked).toEqual([target.id]);
    expect((await show(source.id)).linked).toEqual([]);
  });
});
