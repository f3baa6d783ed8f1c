/**
 * Token scopes and expiry: a scoped token reaches only its areas (write implies read), 403 names
 * the missing scope; mailbox settings and the dashboard need core scopes; an expired token is
 * refused; `token create --scopes/--expires-in` and `token list` show them, with last use.
 */
import request from 'supertest';
import { ApiToken, Brand, Department, DepartmentEmail, Group, Setting, Ticket, TicketAssignee, TicketMessage, TicketPriority, User } from '../../src/db/models';
import { createToken } from '../../src/auth/tokens';
import { parseScopes, requiredScope } from '../../src/auth/scopes';
import { tokenCommand } from '../../src/cli/tokenCommand';
import { unique, useApi } from '../helpers/app';
import { encodeForm } from '../helpers/form';
import { expectDeleted, expectError, expectSuccess } from '../helpers/envelope';

const api = useApi();

async function run(...argv: string[]) {
  let out = '';
  let err = '';
  const code = await tokenCommand(argv, { out: (t) => { out += t; }, err: (t) => { err += t; } });
  return { code, out, err };
}

async function scoped(scopes: string) {
  const { code, out, err } = await run('create', '--name', unique('scoped'), '--scopes', scopes);
  expect({ code, err }).toEqual({ code: 0, err: '' });
  const token = out.trim();
  return {
    get: (path: string) => request(api.app).get(path).auth(token, 'x'),
    post: (path: string, form: Record<string, unknown> = {}) => request(api.app).post(path).auth(token, 'x').type('form').send(encodeForm(form)),
  };
}

describe('scoped tokens', () => {
  it('ticket:write,user:read: writes tickets, reads users, nothing else', async () => {
    const t = await scoped('ticket:write,user:read');
    expect((await t.get('/api/ticket/tag')).status).toBe(200);
    expectSuccess(await t.post('/api/ticket/tag', { name: unique('Tag ') }), 'Successfully created new tag!');
    expect((await t.get('/api/user/organisation')).status).toBe(200);
    expectError(await t.post('/api/user/organisation', { name: unique('Org ') }), 403, 'The API token does not have the user:write scope this request needs.');
    expectError(await t.get('/api/core/brand'), 403, 'The API token does not have the core:read scope this request needs.');
    expectError(await t.post('/api/core/webhook', { url: 'https://example.com/x', events: ['*'] }), 403, /core:write/);
    expectError(await t.get('/api/selfservice/article'), 403, /selfservice:read/);
    // Mailbox settings are administration, though their path is in the ticket area.
    expectError(await t.get('/api/ticket/department/1/email'), 403, /core:read/);
    expectError(await t.post('/api/ticket/department/1/email', { address: 'x@example.com' }), 403, /core:write/);
    // The queue dashboard is administration too.
    expectError(await request(api.app).get('/admin/queues').auth((await createToken(unique('d'), undefined, { scopes: ['ticket:write'] })).token, 'x'), 403, /core:write/);
  });

  it('a self-service type read without a core scope masks its brand\'s SMTP login; with one, shows it', async () => {
    const brand = await Brand.create({ name: unique('Brand'), smtp_username: 'mailer', smtp_password: 'S3cret SMTP' });
    const type = expectSuccess(await api.post('/api/selfservice/type', { brand_id: brand.id, name: unique('Type'), content: 0, view: 0, description: 'x' }), 'Successfully created new type!');
    const selfservice = await scoped('selfservice:read');
    for (const res of [await selfservice.get(`/api/selfservice/type/${type.id}`), await selfservice.get(`/api/selfservice/type?brand_id=${brand.id}`)]) {
      const body = JSON.stringify(res.body);
      expect(res.status).toBe(200);
      expect(body).not.toContain('S3cret SMTP');
      expect(body).not.toContain('mailer');
    }
    expect(expectSuccess(await selfservice.get(`/api/selfservice/type/${type.id}`)).brand).toMatchObject({ id: brand.id, smtp_username: '********', smtp_password: '********' });
    const core = await scoped('selfservice:read,core:read');
    expect(expectSuccess(await core.get(`/api/selfservice/type/${type.id}`)).brand).toMatchObject({ smtp_username: 'mailer', smtp_password: 'S3cret SMTP' });
  });

  it('a department read without a core scope masks its mailboxes\' user names; with one, shows them', async () => {
    const department = expectSuccess(await api.post('/api/ticket/department', { name: unique('Dept'), public: 1 }), 'Successfully created new department!');
    const address = `${unique('box')}@example.com`;
    expectSuccess(await api.post(`/api/ticket/department/${department.id}/email`, { address, brand_id: 1, type: 1, protocol: 0, server: 'imap.example.com', port: 993, encryption: 1, username: 'box-login', password: 'Box secret' }), 'Successfully created new department email!');
    const tickets = await scoped('ticket:read');
    for (const res of [await tickets.get(`/api/ticket/department/${department.id}`), await tickets.get('/api/ticket/department?order_column=id&order_direction=desc&limit=5')]) {
      expect(res.status).toBe(200);
      const body = JSON.stringify(res.body);
      expect(body).toContain(address);
      expect(body).not.toContain('box-login');
      expect(body).not.toContain('Box secret');
    }
    const shown = expectSuccess(await api.get(`/api/ticket/department/${department.id}`));
    expect(shown.emails[0]).toMatchObject({ address, username: 'box-login', password: '********' });
  });

  it('a department with mailboxes is deleted only with core:write (its mailboxes go with it); one without, with ticket:write', async () => {
    const department = expectSuccess(await api.post('/api/ticket/department', { name: unique('Dept') }), 'Successfully created new department!');
    const box = expectSuccess(await api.post(`/api/ticket/department/${department.id}/email`, {
      address: `${unique('box')}@example.com`, brand_id: 1, type: 1, protocol: 0, server: 'imap.example.com', port: 993, encryption: 1, username: 'u', password: 'p',
    }), 'Successfully created new department email!');
    const ticketWriter = await createToken(unique('tw'), undefined, { scopes: ['ticket:write'] });
    const del = (token: string, id: number) => request(api.app).delete(`/api/ticket/department/${id}`).auth(token, 'x');
    expectError(await del(ticketWriter.token, department.id), 403, 'The API token does not have the core:write scope this request needs.');
    expect(await DepartmentEmail.findByPk(box.id)).not.toBeNull();
    expect(await Department.findByPk(department.id)).not.toBeNull();

    const both = await createToken(unique('both'), undefined, { scopes: ['ticket:write', 'core:write'] });
    expectDeleted(await del(both.token, department.id), 'department');
    expect(await DepartmentEmail.findByPk(box.id)).toBeNull();
    const plain = expectSuccess(await api.post('/api/ticket/department', { name: unique('Dept') }), 'Successfully created new department!');
    expectDeleted(await del(ticketWriter.token, plain.id), 'department');
  });

  it('a user with tickets is deleted only with ticket:write (their tickets go with them; another\'s merged into them is given back); one without, with user:write', async () => {
    const newUser = async () => expectSuccess(await api.post('/api/user/user', { email: `${unique('del')}@example.com`, firstname: 'Del' }), 'Successfully created new user!');
    const [owner, other] = [await newUser(), await newUser()];
    const department = (await Department.findOne({ where: { name: 'General Enquiries' } }))!;
    const status = Number((await Setting.findOne({ where: { scope: 'ticket', name: 'default_open_status' } }))!.value);
    const priority = (await TicketPriority.findOne({ where: { name: 'Low' } }))!;
    const openTicket = async (userId: number) => expectSuccess(await api.post('/api/ticket/ticket', {
      user: userId, department: department.id, status, priority: priority.id, subject: unique('Subject'), text: 'Hello', send_user_email: 0, send_operators_email: 0,
    }), 'Successfully created new ticket!');
    const [kept, merged] = [await openTicket(owner.id), await openTicket(other.id)];
    expectSuccess(await api.post(`/api/ticket/ticket/${kept.id}/merge`, { ids: [merged.id] }), 'Successfully updated the ticket!');

    const del = (token: string, id: number) => request(api.app).delete(`/api/user/user/${id}`).auth(token, 'x');
    const userWriter = await createToken(unique('uw'), undefined, { scopes: ['user:write'] });
    expectError(await del(userWriter.token, owner.id), 403, 'The API token does not have the ticket:write scope this request needs.');
    expect(await User.findByPk(owner.id)).not.toBeNull();
    expect((await Ticket.findAll({ where: { id: [kept.id, merged.id] } })).map((t) => t.id).sort()).toEqual([kept.id, merged.id].sort());
    expect(await TicketMessage.count({ where: { ticket_id: kept.id } })).toBe(2);

    // A ticket merged into another is still the user's ticket.
    expectError(await del(userWriter.token, other.id), 403, /ticket:write/);
    expectDeleted(await del(userWriter.token, (await newUser()).id), 'user');
    const both = await createToken(unique('both'), undefined, { scopes: ['user:write', 'ticket:write'] });
    expectDeleted(await del(both.token, owner.id), 'user');
    expect(await Ticket.findByPk(kept.id)).toBeNull();
    expect(await Ticket.findByPk(merged.id)).toMatchObject({ merged_into_id: null, user_id: other.id });
  });

  it('an operator whose delete changes the ticket area is deleted only with ticket:write too; one who changes nothing there, with user:write', async () => {
    const group = (await Group.findOne({ where: { type: 'operator' }, order: [['id', 'ASC']] }))!;
    const newOperator = async () => expectSuccess(await api.post('/api/user/operator', {
      email: `${unique('op')}@example.com`, firstname: 'Op', lastname: 'Erator', groups: [group.id],
    }), 'Successfully created new operator!');
    const department = (await Department.findOne({ where: { name: 'General Enquiries' } }))!;
    const status = Number((await Setting.findOne({ where: { scope: 'ticket', name: 'default_open_status' } }))!.value);
    const priority = (await TicketPriority.findOne({ where: { name: 'Low' } }))!;
    const customer = expectSuccess(await api.post('/api/user/user', { email: `${unique('cu')}@example.com`, firstname: 'Cu' }), 'Successfully created new user!');
    const [assigned, owner, idle] = [await newOperator(), await newOperator(), await newOperator()];
    const ticket = expectSuccess(await api.post('/api/ticket/ticket', {
      user: customer.id, department: department.id, status, priority: priority.id, subject: unique('Subject'), text: 'Hello',
      assignedto: [assigned.id], send_user_email: 0, send_operators_email: 0,
    }), 'Successfully created new ticket!');
    expectSuccess(await api.post('/api/ticket/cannedresponse', { name: unique('Mine'), text: 'Hi', public: 0, user_id: owner.id }), 'Successfully created new canned response!');

    const del = (token: string, id: number) => request(api.app).delete(`/api/user/operator/${id}`).auth(token, 'x');
    const userWriter = await createToken(unique('uw'), undefined, { scopes: ['user:write'] });
    for (const op of [assigned, owner]) {
      expectError(await del(userWriter.token, op.id), 403, 'The API token does not have the ticket:write scope this request needs.');
      expect(await User.findByPk(op.id)).not.toBeNull();
    }
    expect(await TicketAssignee.count({ where: { ticket_id: ticket.id, user_id: assigned.id } })).toBe(1);
    expectDeleted(await del(userWriter.token, idle.id), 'operator');
    const both = await createToken(unique('both'), undefined, { scopes: ['user:write', 'ticket:write'] });
    for (const op of [assigned, owner]) expectDeleted(await del(both.token, op.id), 'operator');
  });

  it('read: every area read-only; a method override counts as the method it names', async () => {
    const t = await scoped('read');
    for (const path of ['/api/core/brand', '/api/user/organisation', '/api/ticket/tag', '/api/selfservice/article', '/api/ticket/department/1/email']) {
      expect((await t.get(path)).status).toBe(200);
    }
    expectError(await t.post('/api/ticket/tag', { name: unique('Tag ') }), 403, /ticket:write/);
    const org = expectSuccess(await api.post('/api/user/organisation', { name: unique('Org ') }), 'Successfully created new organisation!');
    expectError(await t.post(`/api/user/organisation/${org.id}`).set('X-HTTP-Method-Override', 'DELETE'), 403, /user:write/);
  });

  it('write and core:write reach everything they name', async () => {
    const w = await scoped('write');
    expectSuccess(await w.post('/api/user/organisation', { name: unique('Org ') }), 'Successfully created new organisation!');
    const c = await scoped('core:write');
    expect((await c.get('/api/core/brand')).status).toBe(200);
    expect((await c.get('/api/ticket/department/1/email')).status).toBe(200);
    expectError(await c.get('/api/ticket/tag'), 403, /ticket:read/);
  });

  it('a path in other letter case, or with empty segments, needs the same scope as the lower-case one', async () => {
    const t = await scoped('selfservice:read');
    for (const path of ['/api/Core/settings', '/api/CORE/brand/1', '/api/Ticket/ticket', '/api//core/settings', '/api/User/user']) {
      const res = await t.get(path);
      expect({ path, status: res.status }).toEqual({ path, status: res.status === 404 ? 404 : 403 });
      expect(JSON.stringify(res.body)).not.toContain('simpleauth');
    }
    const name = unique('pwned');
    const put = await request(api.app).put('/api/Core/brand/1').auth((await createToken(unique('r'), undefined, { scopes: ['read'] })).token, 'x').type('form').send(encodeForm({ name }));
    expectError(put, 403, /core:write/);
    expect((await Brand.findByPk(1))!.name).not.toBe(name);
    const ticketWriter = await createToken(unique('tw'), undefined, { scopes: ['ticket:write'] });
    expectError(await request(api.app).put('/api/ticket/Department/1/Email/1').auth(ticketWriter.token, 'x').type('form').send(encodeForm({ username: 'pwned' })), 403, /core:write/);
    // An upper-case path still reaches its route for a token that may: routing is unchanged.
    expect((await api.get('/api/Core/brand/1')).status).toBe(200);
  });

  it('the incremental export needs the read scope of the resource\'s area', async () => {
    const t = await scoped('selfservice:read');
    expect((await t.get('/api/export/articles')).status).toBe(200);
    for (const [resource, scope] of [['tickets', 'ticket:read'], ['messages', 'ticket:read'], ['users', 'user:read'], ['organisations', 'user:read']]) {
      expectError(await t.get(`/api/export/${resource}`), 403, `The API token does not have the ${scope} scope this request needs.`);
      expectError(await t.get(`/api/Export/${resource.toUpperCase()}`), 403, new RegExp(scope));
      // A percent-escaped name is the same parameter to the route, so the same scope.
      const escaped = `%${resource.charCodeAt(0).toString(16)}${resource.slice(1)}`;
      expectError(await t.get(`/api/export/${escaped}`), 403, `The API token does not have the ${scope} scope this request needs.`);
    }
    // Names of Object's own properties are no resource: a 404 for a token that may read core.
    const core = await scoped('core:read');
    for (const name of ['constructor', '__proto__', 'toString']) expect((await core.get(`/api/export/${name}`)).status).toBe(404);
    const tickets = await scoped('ticket:read');
    expect((await tickets.get('/api/export/messages')).status).toBe(200);
    expectError(await tickets.get('/api/export/users'), 403, /user:read/);
  });

  it('maps requests to scopes', () => {
    expect(requiredScope('GET', '/ticket/ticket/1')).toBe('ticket:read');
    expect(requiredScope('PATCH', '/selfservice/article/1')).toBe('selfservice:write');
    expect(requiredScope('DELETE', '/ticket/department/3/email/4')).toBe('core:write');
    expect(requiredScope('GET', '/ticket/department/3')).toBe('ticket:read');
    // Express routes paths whatever their case: the scope is read the same way.
    expect(requiredScope('GET', '/Core/settings')).toBe('core:read');
    expect(requiredScope('PUT', '/ticket/Department/1/Email/1')).toBe('core:write');
    expect(requiredScope('PUT', '/ticket//department/1//email/1')).toBe('core:write');
    // The export of each resource: its area's read scope.
    expect(requiredScope('GET', '/export/tickets')).toBe('ticket:read');
    expect(requiredScope('GET', '/export/Messages')).toBe('ticket:read');
    expect(requiredScope('GET', '/export/users')).toBe('user:read');
    expect(requiredScope('GET', '/export/organisations')).toBe('user:read');
    expect(requiredScope('GET', '/export/articles')).toBe('selfservice:read');
    // Nowhere: the administrator's scope, never none.
    expect(requiredScope('GET', '/nowhere')).toBe('core:read');
    expect(requiredScope('POST', '/export/nothing')).toBe('core:write');
    expect(requiredScope('GET', '/export/%75sers')).toBe('user:read');
    expect(requiredScope('GET', '/export/constructor')).toBe('core:read');
    expect(requiredScope('DELETE', '/ticket/department/3/%65mail/4')).toBe('core:write');
    expect(requiredScope('GET', '/export/%E0')).toBe('core:read');
    expect(parseScopes(' Ticket:Write, user:read,user:read')).toEqual(['ticket:write', 'user:read']);
  });
});

describe('token create options and list', () => {
  it('refuses unknown scopes and bad lifetimes with exit code 2', async () => {
    for (const args of [['--scopes', 'ticket:delete'], ['--scopes', 'admin'], ['--scopes', ''], ['--expires-in', '90'], ['--expires-in', '0d'], ['--expires-in', '-1d']]) {
      const res = await run('create', '--name', unique('bad'), ...args);
      expect(res.code).toBe(2);
      expect(res.err).toMatch(/^token create: /);
    }
  });

  it('reads --flag=value as --flag value, and refuses an option it does not know or one given twice (no token made)', async () => {
    const name = unique('eq');
    expect((await run('create', `--name=${name}`, '--scopes=ticket:read', '--expires-in=1h')).code).toBe(0);
    const row = (await ApiToken.findOne({ where: { name } }))!;
    expect(JSON.parse(row.scopes!)).toEqual(['ticket:read']);
    expect(row.expires_at).not.toBeNull();
    for (const [args, message] of [
      [['--scope', 'ticket:read'], 'unknown option --scope'],
      [['--Scopes', 'ticket:read'], 'unknown option --Scopes'],
      [['--scopes', 'ticket:read', '--scopes', 'user:read'], '--scopes is given twice'],
      [['ticket:read'], 'unexpected argument ticket:read'],
    ] as Array<[string[], string]>) {
      const bad = unique('bad');
      const res = await run('create', '--name', bad, ...args);
      expect({ code: res.code, err: res.err.split('\n')[0] }).toEqual({ code: 2, err: `token create: ${message}` });
      expect(await ApiToken.findOne({ where: { name: bad } })).toBeNull();
    }
    // `--scopes=` is a --scopes without scopes: refused, as `--scopes ''` (never full access).
    expect((await run('create', '--name', unique('empty'), '--scopes=')).code).toBe(2);
  });

  it('--expires-in sets the expiry; an expired token is refused; list shows scopes, expiry and last use', async () => {
    const name = unique('exp');
    const token = (await run('create', '--name', name, '--expires-in', '90d', '--scopes', 'ticket:read')).out.trim();
    const row = (await ApiToken.findOne({ where: { name } }))!;
    expect(row.expires_at! - (Math.floor(Date.now() / 1000) + 90 * 86400)).toBeLessThanOrEqual(0);
    expect(row.expires_at! - (Math.floor(Date.now() / 1000) + 90 * 86400)).toBeGreaterThan(-30);
    expect((await request(api.app).get('/api/ticket/tag').auth(token, 'x')).status).toBe(200);
    const listed = (await run('list')).out.split('\n').find((l) => l.includes(`\t${name}\t`))!;
    const [, , , lastUsed, scopes, expires] = listed.split('\t');
    expect(lastUsed).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(scopes).toBe('ticket:read');
    expect(expires).toBe(new Date(row.expires_at! * 1000).toISOString());

    const old = await createToken(unique('old'), undefined, { expiresAt: Math.floor(Date.now() / 1000) - 1 });
    expectError(await request(api.app).get('/api/ticket/tag').auth(old.token, 'x'), 401, 'The API token has expired.');
    expect((await run('list')).out).toContain('(expired)');
  });

  it('no --scopes: full access, shown as such', async () => {
    const name = unique('full');
    const token = (await run('create', '--name', name)).out.trim();
    expect((await request(api.app).get('/api/ticket/department/1/email').auth(token, 'x')).status).toBe(200);
    expect((await run('list')).out.split('\n').find((l) => l.includes(`\t${name}\t`))).toContain('\tfull access\t-');
  });
});
