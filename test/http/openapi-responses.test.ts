/**
 * The OpenAPI document's success responses against the real ones: every route (downloads aside,
 * which answer bytes) is requested through the app, on records made to fill every list and
 * embedded array, and each body is validated against the schema the document declares for that
 * operation and status, made strict: every object described with properties refuses others. So a
 * presented field missing from the schema fails, as does one of another type or nullability, and
 * a field the schema requires that the response lacks.
 */
import '../export/exportEnv';
import request from 'supertest';
import Ajv2020 from 'ajv/dist/2020';
import type { ValidateFunction } from 'ajv';
import {
  CaughtMail, FeedbackForm, Group, IncomingMail, Permission, User, WebhookDelivery,
} from '../../src/db/models';
import { transaction } from '../../src/db/transaction';
import { allRoutes } from '../../src/http/routes';
import { createFeedbackRequest } from '../../src/ticket/feedbackRequest';
import { createTicket } from '../../src/ticket/tickets/service';
import { newEmail, phoneNumbers, testIp, unique, useApi } from '../helpers/app';
import { waitFor } from '../helpers/smtp';

const api = useApi();
let doc: any;

const b64 = (text: string) => Buffer.from(text).toString('base64');
const toPath = (p: string) => p.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
const newPhone = phoneNumbers('8');

// ---------------------------------------------------------------------------------------------
// The document's schema of an operation's answer, strict.

/** The schema with its `$ref`s replaced by what they name (the response schemas hold no cycle). */
function inline(schema: any): any {
  if (Array.isArray(schema)) return schema.map(inline);
  if (!schema || typeof schema !== 'object') return schema;
  if (schema.$ref) return inline(schema.$ref.split('/').slice(1).reduce((at: any, k: string) => at[k], doc));
  return Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, inline(v)]));
}

/** Every object schema that lists its properties refuses any other (unless it says what they may be). */
export function strict(schema: any): any {
  if (Array.isArray(schema)) return schema.map(strict);
  if (!schema || typeof schema !== 'object') return schema;
  const out: any = Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, k === 'properties'
    ? Object.fromEntries(Object.entries(v as object).map(([name, s]) => [name, strict(s)]))
    : strict(v)]));
  if (out.properties && out.additionalProperties === undefined) out.additionalProperties = false;
  return out;
}

const ajv = new Ajv2020({ strict: false, allErrors: true });
const validators = new Map<string, ValidateFunction>();
/** Routes (`GET /api/core/brand`) whose answer was validated. */
const validated = new Set<string>();

function validatorOf(method: string, route: string, status: number): ValidateFunction {
  const key = `${method} ${route} ${status}`;
  let v = validators.get(key);
  if (!v) {
    const op = doc.paths[toPath(route)]?.[method.toLowerCase()];
    const schema = op?.responses?.[status]?.content?.['application/json']?.schema;
    if (!schema) throw new Error(`The document declares no JSON answer ${status} for ${method} ${route}`);
    v = ajv.compile(strict(inline(schema)));
    validators.set(key, v);
  }
  return v;
}

/** The body of a successful answer, after checking it against the document's schema of the route. */
function valid(method: string, route: string, res: request.Response): any {
  expect({ route: `${method} ${route}`, status: res.status, body: res.status < 300 ? 'ok' : res.body })
    .toEqual({ route: `${method} ${route}`, status: expect.any(Number), body: 'ok' });
  const validate = validatorOf(method, route, res.status);
  const ok = validate(res.body);
  const errors = ok ? [] : validate.errors!.map((e) => `${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`);
  expect({ route: `${method} ${route}`, errors }).toEqual({ route: `${method} ${route}`, errors: [] });
  validated.add(`${method} ${route}`);
  return res.body.data;
}

/** `route` with its parameters filled (`/api/x/:id` with `{ id: 3 }`). */
const fill = (route: string, params: Record<string, unknown>) => route.replace(/:([A-Za-z0-9_]+)/g, (_m, k: string) => String(params[k]));

const get = async (route: string, params: Record<string, unknown> = {}, query?: Record<string, unknown>) => valid('GET', route, await api.get(fill(route, params), query));
const post = async (route: string, body: Record<string, unknown>, params: Record<string, unknown> = {}) => valid('POST', route, await api.post(fill(route, params), body));
const put = async (route: string, params: Record<string, unknown>, body: Record<string, unknown>) => valid('PUT', route, await api.put(fill(route, params), body));
const del = async (route: string, params: Record<string, unknown>) => valid('DELETE', route, await api.del(fill(route, params)));

/** A list, checked, that holds at least one record (an empty one would check nothing of its items). */
async function list(route: string, params: Record<string, unknown> = {}, query: Record<string, unknown> = {}): Promise<any[]> {
  const data = await get(route, params, { limit: 5, order_direction: 'desc', ...query });
  expect({ route, empty: data.length === 0 }).toEqual({ route, empty: false });
  return data;
}

/** list, show, and (when given) update and delete of a resource's record. */
async function crud(base: string, id: number, opts: { params?: Record<string, unknown>; query?: Record<string, unknown>; update?: Record<string, unknown>; remove?: number } = {}) {
  const params = { ...opts.params, id };
  await list(base, opts.params, opts.query);
  await get(`${base}/:id`, params);
  if (opts.update) await put(`${base}/:id`, params, opts.update);
  if (opts.remove) await del(`${base}/:id`, { ...opts.params, id: opts.remove });
}

beforeAll(async () => {
  const res = await request(api.app).get('/api/openapi.json');
  expect(res.status).toBe(200);
  doc = res.body;
});

// ---------------------------------------------------------------------------------------------

describe('strictness of the check', () => {
  it('fails a response with a field the schema lacks, of another type, or without a required field', () => {
    const schema = strict({ type: 'object', required: ['id', 'name'], properties: { id: { type: 'integer' }, name: { type: ['string', 'null'] } } });
    const check = ajv.compile(schema);
    expect(check({ id: 1, name: null })).toBe(true);
    expect(check({ id: 1, name: 'x', extra: 1 })).toBe(false);
    expect(check({ id: '1', name: 'x' })).toBe(false);
    expect(check({ id: 1 })).toBe(false);
  });
});

describe('core', () => {
  it('brands, bans, whitelist, languages, spam rules, settings, email templates', async () => {
    const brand = await post('/api/core/brand', { name: unique('Brand') });
    await crud('/api/core/brand', brand.id, { update: { name: unique('Brand') } });

    const ban = await post('/api/core/ipban', { ip: testIp(), type: 0, reason: 'Too many attempts' });
    const other = await post('/api/core/ipban', { ip: testIp(), type: 1 });
    await crud('/api/core/ipban', ban.id, { update: { reason: 'Changed' }, remove: other.id });

    const entry = await post('/api/core/ipwhitelist', { ip: testIp(), description: 'Office' });
    const gone = await post('/api/core/ipwhitelist', { ip: testIp() });
    await crud('/api/core/ipwhitelist', entry.id, { update: { description: 'Home' }, remove: gone.id });

    await crud('/api/core/language', 1);

    const rule = await post('/api/core/spamrule', { text: unique('viagra'), type: 0 });
    const rule2 = await post('/api/core/spamrule', { text: unique('casino'), type: 1 });
    await crud('/api/core/spamrule', rule.id, { update: { text: unique('pills') }, remove: rule2.id });

    await get('/api/core/settings');
    const [template] = await list('/api/core/emailtemplate');
    await get('/api/core/emailtemplate/:id', { id: template.id });
    await put('/api/core/emailtemplate/:id', { id: template.id }, { subject: template.subject });
  });

  it('webhooks and their deliveries, the event feed, mail and caught mail', async () => {
    const hook = await post('/api/core/webhook', { url: `http://127.0.0.1:9/${unique('hook')}`, events: ['*'] });
    const spare = await post('/api/core/webhook', { url: `http://127.0.0.1:9/${unique('hook')}`, events: ['user.created'] });
    await crud('/api/core/webhook', hook.id, { update: { description: 'Ours' }, remove: spare.id });

    // A ticket with the user's email queues a mail, and events for the feed.
    await makeTicket({ send_user_email: 1 });
    const feed = await get('/api/core/event', {}, { limit: 5 });
    expect(feed.events.length).toBeGreaterThan(0);
    await get('/api/core/event/:id', { id: feed.events[0].id });

    const delivery = await WebhookDelivery.create({
      webhook_id: hook.id, event_id: feed.events[0].id, uuid: '0b6e2f4c-8a8f-4d7e-9f1e-3c2b1a0d9e8f', event_name: feed.events[0].type,
      status: 'failed', attempts: 4, response_code: 500, error: 'Internal Server Error', last_attempt_at: 1700000000,
    });
    const params = { webhook: hook.id, id: delivery.id };
    await list('/api/core/webhook/:webhook/delivery', params);
    await get('/api/core/webhook/:webhook/delivery/:id', params);
    await post('/api/core/webhook/:webhook/delivery/:id/redeliver', {}, params);
    // The webhook listens to every event: later files of this worker (which share its database) would deliver theirs to it.
    await del('/api/core/webhook/:id', { id: hook.id });

    const [mail] = await list('/api/core/mail');
    await get('/api/core/mail/:id', { id: mail.id });

    const caught = await CaughtMail.create({ mail_from: 'help@example.com', rcpt_to: 'a@example.com, b@example.com', subject: 'Hi', message_id: '<m@x>', text: 'Hello', html: null, headers: 'Subject: Hi', size: 120 });
    await crud('/api/core/mailcatcher', caught.id);
  });
});

// ---------------------------------------------------------------------------------------------

let seq = 0;
async function makeTicket(extra: Record<string, unknown> = {}): Promise<any> {
  const user = await User.create({ type: 'user', brand_id: 1, email: newEmail('oar'), firstname: 'Uma', lastname: `User${seq++}` });
  return post('/api/ticket/ticket', {
    department: 1, status: 1, priority: 1, user: user.id, subject: unique('Printer'), text: 'It is broken.',
    send_user_email: 0, send_operators_email: 0, ...extra,
  });
}

describe('user', () => {
  it('users, operators, organisations, custom fields, roles, permissions, groups, settings', async () => {
    const org = await post('/api/user/organisation', { name: unique('Org'), notes: 'Key account' });
    const user = await post('/api/user/user', {
      firstname: 'Uma', lastname: 'User', email: newEmail('oau'), organisation: org.id, phone: [newPhone().e164], additional_email: [newEmail('oax')],
    });
    const other = await post('/api/user/user', { firstname: 'Ned', lastname: 'Gone', email: newEmail('oau') });
    await crud('/api/user/user', user.id, { update: { lastname: 'Changed' }, remove: other.id });

    const [opGroup] = await list('/api/user/operatorgroup');
    await get('/api/user/operatorgroup/:id', { id: opGroup.id });
    const operator = await post('/api/user/operator', { firstname: 'Otto', lastname: 'Op', email: newEmail('oao'), groups: [opGroup.id], phone: [newPhone().e164] });
    const spare = await post('/api/user/operator', { firstname: 'Sam', lastname: 'Spare', email: newEmail('oao'), groups: [opGroup.id] });
    await crud('/api/user/operator', operator.id, { update: { lastname: 'Changed' }, remove: spare.id });

    const org2 = await post('/api/user/organisation', { name: unique('Org') });
    await crud('/api/user/organisation', org.id, { update: { notes: 'Changed' }, remove: org2.id });

    for (const base of ['/api/user/organisationcustomfield', '/api/user/customfield']) {
      const field = await post(base, { name: unique('Colour'), type: 5, options: [{ value: 'Red', 'value:fr': 'Rouge' }, { value: 'Blue' }], 'name:fr': 'Couleur' });
      const gone = await post(base, { name: unique('Size'), type: 8 });
      await crud(base, field.id, { update: { description: 'Pick one' }, remove: gone.id });
    }

    const permissions = await Permission.findAll({ order: [['id', 'ASC']], limit: 2 });
    const role = await post('/api/user/role', { name: unique('Leads'), permission: { [permissions[0].id]: 1, [permissions[1].id]: 1 }, 'name:fr': 'Chefs' });
    const role2 = await post('/api/user/role', { name: unique('Temp') });
    await crud('/api/user/role', role.id, { update: { description: 'Team leads' }, remove: role2.id });

    await crud('/api/user/permission', permissions[0].id);
    const userGroup = await Group.create({ type: 'user', name: unique('Customers') });
    await crud('/api/user/usergroup', userGroup.id);
    await get('/api/user/settings');
  });
});

describe('ticket', () => {
  it('tickets with what they embed, messages, forwards, attachments, audit, merge, split, restore, bulk and its job', async () => {
    const [group] = await get('/api/user/operatorgroup', {}, { limit: 1 });
    const op = await post('/api/user/operator', { firstname: 'Ann', lastname: 'Signee', email: newEmail('oat'), groups: [group.id] });
    const field = await post('/api/ticket/customfield', { name: unique('Serial'), type: 8 });
    const plan = await post('/api/ticket/slaplan', {
      name: unique('Gold'), business_hours: 1, timezone: 'Europe/Paris', schedule: { 1: { start: '09:00', end: '17:00' } }, targets: { 1: { first_reply: 60 } },
    });
    const tag = await post('/api/ticket/tag', { name: unique('printer'), 'name:fr': 'imprimante' });
    const ticket = await makeTicket({
      tag: [tag.id], cc: ['boss@example.com'], assignedto: [op.id], customfield: { [field.id]: 'SN-1' },
      attachment: [{ filename: 'error.txt', contents: b64('PC LOAD LETTER') }], sla_plan: plan.id,
    });
    const spare = await makeTicket();
    await crud('/api/ticket/ticket', ticket.id, { update: { subject: unique('Printer still') }, remove: spare.id });

    const message = await post('/api/ticket/message', {
      ticket_id: ticket.id, user_id: ticket.user_id, text: 'More detail', attachment: [{ filename: 'photo.txt', contents: b64('photo') }],
    });
    const note = await post('/api/ticket/message', { ticket_id: ticket.id, user_id: op.id, text: 'A note', type: 1 });
    await crud('/api/ticket/message', message.id, { query: { ticket_id: ticket.id }, update: { text: 'Edited' }, remove: note.id });
    await post('/api/ticket/forward', { ticket_id: ticket.id, user_id: op.id, text: 'FYI', subject: 'Fwd', to_address: ['vendor@example.com'] });
    await list('/api/ticket/message', {}, { ticket_id: ticket.id, type: 2 });

    const [attachment] = await list('/api/ticket/attachment', {}, { ticket_id: ticket.id });
    await get('/api/ticket/attachment/:id', { id: attachment.id });
    await del('/api/ticket/attachment/:id', { id: attachment.id });

    await list('/api/ticket/ticket/:id/audit', { id: ticket.id });
    const source = await makeTicket();
    await post('/api/ticket/ticket/:id/merge', { ids: [source.id] }, { id: ticket.id });
    const splittable = await post('/api/ticket/message', { ticket_id: ticket.id, user_id: ticket.user_id, text: 'Another problem' });
    await post('/api/ticket/ticket/:id/split', { message_id: splittable.id, user_id: op.id }, { id: ticket.id });
    // spare went to the trash with the crud above.
    await post('/api/ticket/ticket/:id/restore', {}, { id: spare.id });

    const job = await valid('POST', '/api/ticket/ticket/bulk', await api.post('/api/ticket/ticket/bulk', { ids: [ticket.id], priority: 1 }));
    await get('/api/ticket/job/:id', { id: job.id });
    await get('/api/core/job/:id', { id: job.id });
  });

  it('departments and their addresses, statuses, priorities, tags, canned responses, SLA plans, filters, custom fields, settings', async () => {
    const [group] = await get('/api/user/operatorgroup', {}, { limit: 1 });
    const dept = await post('/api/ticket/department', { name: unique('Sales'), groups: [group.id], 'name:fr': 'Ventes' });
    const dept2 = await post('/api/ticket/department', { name: unique('Temp') });
    const email = await post('/api/ticket/department/:department/email', { address: newEmail('oad'), brand_id: 1 }, { department: dept.id });
    const email2 = await post('/api/ticket/department/:department/email', { address: newEmail('oad'), brand_id: 1 }, { department: dept.id });
    await crud('/api/ticket/department/:department/email', email.id, { params: { department: dept.id }, update: { port: 993 }, remove: email2.id });
    await crud('/api/ticket/department', dept.id, { update: { description: 'Buying' }, remove: dept2.id });

    for (const [base, body] of [['/api/ticket/status', { colour: '#ff0000' }], ['/api/ticket/priority', { colour: '#00ff00' }], ['/api/ticket/tag', { colour: '#0000ff' }]] as const) {
      const made = await post(base, { name: unique('Thing'), 'name:fr': 'Chose', ...body });
      const gone = await post(base, { name: unique('Gone'), ...body });
      await crud(base, made.id, { update: { name: unique('Renamed') }, remove: gone.id });
    }

    const canned = await post('/api/ticket/cannedresponse', { name: unique('Thanks'), text: 'Thank you, {{ user.firstname }}', tag: [unique('polite')], groups: [group.id] });
    const canned2 = await post('/api/ticket/cannedresponse', { name: unique('Bye'), text: 'Bye' });
    await crud('/api/ticket/cannedresponse', canned.id, { update: { text: 'Thanks!' }, remove: canned2.id });

    const plan = await post('/api/ticket/slaplan', { name: unique('Silver'), targets: { 1: { first_reply: 30, resolution: 240 } } });
    const plan2 = await post('/api/ticket/slaplan', { name: unique('Bronze') });
    await crud('/api/ticket/slaplan', plan.id, { update: { description: 'Fast' }, remove: plan2.id });

    const filter = await post('/api/ticket/filter', {
      name: unique('Mine'), groups: [group.id],
      conditions: [{ type: 1, rules: [{ item: 'status', operator: 'equals', value: 1 }, { item: 'subject', operator: 'contains', value: 'refund' }] }],
    });
    const filter2 = await post('/api/ticket/filter', { name: unique('Other') });
    await crud('/api/ticket/filter', filter.id, { update: { name: unique('Renamed') }, remove: filter2.id });

    const field = await post('/api/ticket/customfield', { name: unique('Serial'), type: 8, depts: [dept.id], purge: 1 });
    const field2 = await post('/api/ticket/customfield', { name: unique('Gone'), type: 8 });
    await crud('/api/ticket/customfield', field.id, { update: { description: 'On the back' }, remove: field2.id });
    const sized = await post('/api/ticket/customfield', { name: unique('Size'), type: 5, options: [{ value: 'S', 'value:fr': 'P' }, { value: 'L' }] });
    const [option] = await list('/api/ticket/customfield/:customfield/option', { customfield: sized.id });
    await get('/api/ticket/customfield/:customfield/option/:id', { customfield: sized.id, id: option.id });

    await get('/api/ticket/settings');
    await get('/api/ticket/channel/:channel/settings', { channel: 'web' });
  });

  it('feedback and incoming mail', async () => {
    const user = await User.create({ type: 'user', brand_id: 1, email: newEmail('oaf') });
    const form = (await FeedbackForm.findOne({ order: [['id', 'ASC']] }))!;
    const { ticket } = await transaction((t) => createTicket({ departmentId: 1, subject: 'Feedback wanted', text: 'Hello', userId: user.id }, t));
    const feedback = await createFeedbackRequest({ ticketId: ticket.id, userId: user.id, form });
    await crud('/api/ticket/feedback', feedback.id, { update: { rating: 1 } });

    const mail = await IncomingMail.create({
      department_email_id: null, remote_uid: '42', message_id: '<in@example.com>', from_address: 'someone@example.com', subject: 'Help',
      decision: 'rejected', reason: 'Spam', ticket_id: null, ticket_message_id: null, size: 1234,
    });
    await crud('/api/ticket/incomingmail', mail.id);
    await post('/api/ticket/incomingmail/dryrun', { raw: 'From: someone@example.com\r\nTo: support@example.com\r\nSubject: Help\r\n\r\nHello\r\n' });
  });
});

describe('self-service', () => {
  it('types, tags, categories, articles, attachments, comments, search, settings', async () => {
    const type = await post('/api/selfservice/type', { brand_id: 1, name: unique('Docs'), content: 0, view: 0, description: 'Docs', 'name:fr': 'Docs FR' });
    const type2 = await post('/api/selfservice/type', { brand_id: 1, name: unique('Gone'), content: 0, view: 0, description: 'Old' });
    await crud('/api/selfservice/type', type.id, { update: { description: 'Manuals' }, remove: type2.id });

    const tag = await post('/api/selfservice/tag', { name: unique('howto'), 'name:fr': 'comment' });
    const tag2 = await post('/api/selfservice/tag', { name: unique('gone') });
    await crud('/api/selfservice/tag', tag.id, { update: { name: unique('guide') }, remove: tag2.id });

    const category = await post('/api/selfservice/category', { type_id: type.id, name: unique('Printers') });
    const category2 = await post('/api/selfservice/category', { type_id: type.id, name: unique('Gone') });
    await crud('/api/selfservice/category', category.id, { update: { public: 0 }, remove: category2.id });

    const author = await User.create({ type: 'operator', email: newEmail('oaa'), firstname: 'Ada', lastname: 'Author' });
    const word = unique('toner').toLowerCase();
    const article = await post('/api/selfservice/article', {
      author_id: author.id, title: `Replacing the ${word}`, text: `Open the lid and replace the ${word}.`, category: [category.id], type: [type.id],
      tag: [tag.name], published: 1, attachment: [{ filename: 'guide.txt', contents: b64('step one') }],
    });
    const article2 = await post('/api/selfservice/article', { author_id: author.id, title: unique('Gone'), text: 'x', category: [category.id] });
    await crud('/api/selfservice/article', article.id, { update: { excerpt: 'How to' }, remove: article2.id });
    await list('/api/selfservice/article/search', {}, { term: word });

    const [attachment] = await list('/api/selfservice/attachment', {}, { article_id: article.id });
    await get('/api/selfservice/attachment/:id', { id: attachment.id });
    await del('/api/selfservice/attachment/:id', { id: attachment.id });

    const comment = await post('/api/selfservice/comment', { article_id: article.id, name: 'Jo', text: 'Thanks!' });
    const comment2 = await post('/api/selfservice/comment', { article_id: article.id, name: 'Al', text: 'Great' });
    await crud('/api/selfservice/comment', comment.id, { update: { status: 1 }, remove: comment2.id });
    await get('/api/selfservice/settings');
  });
});

describe('export', () => {
  it('pages of every exported resource', async () => {
    // The export holds back the last EXPORT_SETTLE_SECONDS (2 here): each page is asked for until
    // the records made above are past that, and every page asked for is validated. A page counts
    // tombstones too, and the export tests run in the same database before this file may have left
    // many at the start of a stream: the largest page reaches the records past them.
    for (const resource of ['tickets', 'messages', 'users', 'organisations', 'articles']) {
      await waitFor(async () => (await get(`/api/export/${resource}`, {}, { limit: 1000 })).records.length > 0, 15000, `a ${resource} export page with records`);
    }
  });
});

describe('coverage', () => {
  it('validated the answer of every route that answers JSON', () => {
    const missing = allRoutes().filter((r) => r.action !== 'download').map((r) => `${r.method} ${r.path}`).filter((k) => !validated.has(k));
    expect(missing).toEqual([]);
  });
});
