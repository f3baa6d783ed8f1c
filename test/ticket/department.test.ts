import { Op } from 'sequelize';
import {
  Brand, CustomFieldDepartment, Department, DepartmentBrand, DepartmentEmail, DepartmentGroup, EmailTemplate, Group, OperatorDepartment,
  PriorityDepartment, User,
} from '../../src/db/models';
import { sequelize } from '../../src/db/sequelize';
import { ValidationError } from '../../src/errors';
import { EMAIL_TEMPLATE_KEYS, departmentResource, emailTemplates } from '../../src/ticket/department';
import { useApi, unique } from '../helpers/app';
import { raceAfterHeld } from '../helpers/races';
import { ticketContext } from './ticketSupport';
import { countWarm } from '../helpers/queries';
import { expectDeleted, expectError, expectList, expectNotFound, expectSuccess } from '../helpers/envelope';

const api = useApi();
const BASE = '/api/ticket/department';
const DEPARTMENT_KEYS = [
  'id', 'name', 'description', 'order', 'parent_id', 'public', 'registered_only', 'ticket_number_format', 'default_assignedto',
  'notify_frontend_ticket', 'notify_email_ticket', 'notify_operators', 'disable_user_email_replies', 'email_templates', 'created_at',
  'updated_at', 'emails', 'groups', 'operators', 'translations',
];
const EMAIL_KEYS = [
  'id', 'department_id', 'brand_id', 'address', 'type', 'protocol', 'server', 'username', 'password', 'port', 'encryption', 'consume_all',
  'delete_downloaded', 'last_polled_at', 'last_error', 'last_error_at', 'poll_failures', 'next_poll_at', 'created_at', 'updated_at',
  // The OAuth2 extension (docs/mail.md, OAuth2).
  'auth_type', 'oauth_provider', 'oauth_client_id', 'oauth_client_secret', 'oauth_tenant', 'oauth_token_url', 'oauth_scope', 'oauth_refresh_token', 'oauth_state',
];
const NO_TEMPLATES = Object.fromEntries(EMAIL_TEMPLATE_KEYS.map((k) => [k, -1]));
/** The templates the install ships, by key: what a new department maps for the keys it is not sent. */
const shipped = async () => {
  const templates = await EmailTemplate.findAll({ where: { brand_id: null }, order: [['id', 'ASC']] });
  return Object.fromEntries(EMAIL_TEMPLATE_KEYS.map((k) => [k, templates.find((t) => t.name === k)!.id]));
};

const ids = (data: any[]) => data.map((d) => d.id);
const updated = (res: Parameters<typeof expectSuccess>[0]) => expectSuccess(res, 'Successfully updated the department!');

const makeDepartment = (values: Partial<Department> = {}) => Department.create({ name: unique('Dept'), ...values });
const makeOperator = (values: Partial<User> = {}) => User.create({ type: 'operator', email: `${unique('op')}@example.com`, firstname: 'Ada', lastname: 'Lovelace', ...values });

describe('GET /api/ticket/department', () => {
  it('lists the seeded department with its email, groups and fields', async () => {
    const data = expectList(await api.get(BASE, { limit: 1000 }));
    const general = data.find((d) => d.name === 'General Enquiries');
    expect(Object.keys(general).sort()).toEqual([...DEPARTMENT_KEYS].sort());
    expect(general).toMatchObject({
      description: 'Questions of every kind.', order: 1, parent_id: null, public: 1, ticket_number_format: null, default_assignedto: null,
      notify_frontend_ticket: 1, notify_email_ticket: 1, notify_operators: 1, disable_user_email_replies: 0,
    });
    // The seed maps every key to the template of that name (for every brand).
    const templates = await EmailTemplate.findAll({ where: { brand_id: null } });
    expect(general.email_templates).toEqual(Object.fromEntries(EMAIL_TEMPLATE_KEYS.map((k) => [k, templates.find((t) => t.name === k)!.id])));
    expect(general.emails).toHaveLength(1);
    expect(Object.keys(general.emails[0]).sort()).toEqual([...EMAIL_KEYS].sort());
    expect(general.emails[0]).toMatchObject({ department_id: general.id, address: 'support@example.com' });
    const admins = (await Group.findOne({ where: { type: 'operator', administrator: 1 }, order: [['id', 'ASC']] }))!;
    expect(general.groups).toContainEqual({
      id: admins.id, name: 'Administrators', description: admins.description, colour: admins.colour, administrator: 1,
      created_at: admins.created_at, updated_at: admins.updated_at, pivot: { department_id: general.id, group_id: admins.id },
    });
  });

  it('embeds operators with their pivot, and email templates', async () => {
    const dept = await makeDepartment({ email_templates: JSON.stringify({ user_ticket_opened: 4, operator_ticket_note: '7', bogus: 3, user_ticket_reply: 'x' }) });
    const op = await makeOperator({ firstname: ' Grace', lastname: null, avatar: 'a.png' });
    const customer = await User.create({ type: 'user', brand_id: 1, email: `${unique('u')}@example.com` });
    await OperatorDepartment.bulkCreate([{ user_id: op.id, department_id: dept.id }, { user_id: customer.id, department_id: dept.id }]);
    const data = expectSuccess(await api.get(`${BASE}/${dept.id}`));
    expect(data.operators).toEqual([{
      id: op.id, firstname: ' Grace', lastname: null, email: op.email, formatted_name: 'Grace', avatar: 'a.png', pivot: { department_id: dept.id, user_id: op.id },
    }]);
    expect(data.email_templates).toEqual({ ...NO_TEMPLATES, user_ticket_opened: 4, operator_ticket_note: 7 });
    expect(Object.keys(data.email_templates)).toEqual([...EMAIL_TEMPLATE_KEYS]);
    expect(data).toMatchObject({ emails: [], groups: [] });
  });

  describe('filters', () => {
    let brand: Brand;
    let top: Department;
    let child: Department;
    let hidden: Department;
    beforeAll(async () => {
      brand = await Brand.create({ name: unique('brand') });
      top = await makeDepartment({ public: 1 });
      child = await makeDepartment({ parent_id: top.id, public: 1, registered_only: 1 });
      hidden = await makeDepartment({ public: 0 });
      await DepartmentBrand.bulkCreate([{ department_id: top.id, brand_id: brand.id }, { department_id: hidden.id, brand_id: brand.id }]);
    });

    it('brand_id', async () => {
      const res = await api.get(BASE, { brand_id: brand.id });
      expect(ids(expectList(res))).toEqual([top.id, hidden.id]);
      expect(res.body.count).toBe(2);
      expect(expectList(await api.get(BASE, { brand_id: 999999 }))).toEqual([]);
      expectError(await api.get(BASE, { brand_id: 'x' }), 422, 'The brand id must be an integer.');
    });

    it('parent_id: 0 for top level, an id for its children', async () => {
      const topLevel = expectList(await api.get(BASE, { parent_id: 0, limit: 1000 }));
      expect(topLevel.every((d) => d.parent_id === null)).toBe(true);
      expect(ids(topLevel)).toEqual(expect.arrayContaining([top.id, hidden.id]));
      expect(ids(topLevel)).not.toContain(child.id);
      expect(ids(expectList(await api.get(BASE, { parent_id: top.id })))).toEqual([child.id]);
      expectError(await api.get(BASE, { parent_id: -1 }), 422, 'The parent id must be at least 0.');
    });

    it('public and registered_only', async () => {
      const hiddenOnes = expectList(await api.get(BASE, { public: 0, limit: 1000 }));
      expect(hiddenOnes.every((d) => d.public === 0)).toBe(true);
      expect(ids(hiddenOnes)).toContain(hidden.id);
      expect(ids(expectList(await api.get(BASE, { public: 'true', limit: 1000 })))).not.toContain(hidden.id);
      const registered = ids(expectList(await api.get(BASE, { registered_only: 1, limit: 1000 })));
      expect(registered).toContain(child.id);
      expect(registered).not.toContain(top.id);
      expect(ids(expectList(await api.get(BASE, { registered_only: 0, parent_id: top.id })))).toEqual([]);
      expectError(await api.get(BASE, { public: 'perhaps' }), 422, 'The public field must be true or false.');
    });
  });

  it('pages and sorts', async () => {
    await makeDepartment({ order: 5 });
    await makeDepartment({ order: -5 });
    const all = expectList(await api.get(BASE, { limit: 1000 }));
    expect(ids(all)).toEqual([...ids(all)].sort((a, b) => a - b));
    const page = await api.get(BASE, { start: 2, limit: 2 });
    expect(ids(expectList(page))).toEqual(ids(all.slice(1, 3)));
    expect(page.body.count).toBe(await Department.count());
    const byOrder = expectList(await api.get(BASE, { order_column: 'order', order_direction: 'desc', limit: 1000 })).map((d) => d.order);
    expect(byOrder).toEqual([...byOrder].sort((a, b) => b - a));
    expectError(await api.get(BASE, { order_column: 'email_templates' }), 422, 'The selected order column is invalid.');
  });

  it('runs the same number of queries for limit=1 and limit=50', async () => {
    const group = await Group.create({ type: 'operator', name: unique('group') });
    for (let i = 0; i < 8; i++) {
      const dept = await makeDepartment();
      const op = await makeOperator();
      await DepartmentEmail.create({ department_id: dept.id, brand_id: 1, address: `${unique('d')}@example.com` });
      await DepartmentGroup.create({ department_id: dept.id, group_id: group.id });
      await OperatorDepartment.create({ department_id: dept.id, user_id: op.id });
    }
    const measure = async (query: Record<string, unknown>) => {
      const { result, queries } = await countWarm(async () => api.get(BASE, query));
      expectList(result);
      return { res: result, queries: queries.filter((q) => !/api_tokens|ip_bans/.test(q)) };
    };
    for (const query of [{ order_direction: 'desc' }, { order_direction: 'desc', parent_id: 0, public: 1 }]) {
      await api.get(BASE, query);
      const one = await measure({ ...query, limit: 1 });
      const fifty = await measure({ ...query, limit: 50 });
      expect(one.res.body.data).toHaveLength(1);
      expect(fifty.res.body.data.length).toBeGreaterThanOrEqual(8);
      expect(fifty.queries.length).toBe(one.queries.length);
      // count, page, emails, group links, groups, operator links, operators, translations
      expect(fifty.queries.length).toBeLessThanOrEqual(8);
    }
  });
});

describe('GET /api/ticket/department/{id}', () => {
  it('shows a department', async () => {
    const dept = await makeDepartment({ description: 'd', ticket_number_format: '{number}', notify_operators: 0 });
    const data = expectSuccess(await api.get(`${BASE}/${dept.id}`));
    expect(data).toMatchObject({ id: dept.id, name: dept.name, description: 'd', ticket_number_format: '{number}', notify_operators: 0, email_templates: NO_TEMPLATES });
    expect(data.created_at).toBe(dept.created_at);
  });

  it.each(['999999', 'abc'])('404 for %s', async (id) => {
    expectNotFound(await api.get(`${BASE}/${id}`), 'department');
  });
});

describe('DELETE /api/ticket/department/{id}', () => {
  it('deletes a department with its emails and links', async () => {
    const dept = await makeDepartment();
    const op = await makeOperator();
    await DepartmentEmail.create({ department_id: dept.id, brand_id: 1, address: `${unique('x')}@example.com` });
    await DepartmentBrand.create({ department_id: dept.id, brand_id: 1 });
    await OperatorDepartment.create({ department_id: dept.id, user_id: op.id });
    const res = await api.del(`${BASE}/${dept.id}`);
    expectDeleted(res, 'department');
    expect(await Department.findByPk(dept.id)).toBeNull();
    expect(await DepartmentEmail.count({ where: { department_id: dept.id } })).toBe(0);
    expect(await DepartmentBrand.count({ where: { department_id: dept.id } })).toBe(0);
    expect(await OperatorDepartment.count({ where: { department_id: dept.id } })).toBe(0);
    expect(await User.findByPk(op.id)).not.toBeNull();
    expectNotFound(await api.get(`${BASE}/${dept.id}`), 'department');
    expectNotFound(await api.del(`${BASE}/${dept.id}`), 'department');
  });

  it('refuses a department that has sub-departments', async () => {
    const parent = await makeDepartment();
    const child = await makeDepartment({ parent_id: parent.id });
    expectError(await api.del(`${BASE}/${parent.id}`), 422, 'The department cannot be deleted while it has sub-departments: move or delete them first.');
    expect(await Department.findByPk(parent.id)).not.toBeNull();
    expectDeleted(await api.del(`${BASE}/${child.id}`), 'department');
    expectDeleted(await api.del(`${BASE}/${parent.id}`), 'department');
  });

  it('refuses a department that tickets are in (trashed ones too)', async () => {
    const dept = await makeDepartment();
    await DepartmentBrand.create({ department_id: dept.id, brand_id: 1 });
    const ticket = expectSuccess(await api.post('/api/ticket/ticket', {
      department: dept.id, status: 1, priority: 1, user_email: `${unique('u')}@example.com`, subject: 'S', text: 'T', send_user_email: 0, send_operators_email: 0,
    }), 'Successfully created new ticket!');
    expect((await api.del(`/api/ticket/ticket/${ticket.id}`)).status).toBe(200);
    expectError(await api.del(`${BASE}/${dept.id}`), 422, 'The department cannot be deleted because tickets are in it: move them to another department first.');
    expect(await Department.findByPk(dept.id)).not.toBeNull();
  });

  it('refuses the only department of a priority or a ticket custom field (they would be offered everywhere), and drops it from the others', async () => {
    const [only, shared, other] = [await makeDepartment(), await makeDepartment(), await makeDepartment()];
    const priority = expectSuccess(await api.post('/api/ticket/priority', { name: unique('P'), depts: [only.id] }), 'Successfully created new priority!');
    const fieldName = unique('F');
    const field = expectSuccess(await api.post('/api/ticket/customfield', { name: fieldName, type: 8, required: 1, depts: [shared.id] }), 'Successfully created new custom field!');
    expectError(await api.del(`${BASE}/${only.id}`), 422, `The department cannot be deleted because it is the only department of the priority "${priority.name}": give it another department first.`);
    expectError(await api.del(`${BASE}/${shared.id}`), 422, `The department cannot be deleted because it is the only department of the custom field "${fieldName}": give it another department first.`);
    const deptsOf = async (model: typeof PriorityDepartment | typeof CustomFieldDepartment, where: Record<string, number>) =>
      ((await (model as typeof PriorityDepartment).findAll({ where })) as any[]).map((l) => l.department_id).sort((a, b) => a - b);
    expect(await deptsOf(PriorityDepartment, { priority_id: priority.id })).toEqual([only.id]);

    expectSuccess(await api.put(`/api/ticket/priority/${priority.id}`, { depts: [only.id, other.id] }), 'Successfully updated the priority!');
    expectSuccess(await api.put(`/api/ticket/customfield/${field.id}`, { depts: [shared.id, other.id] }), 'Successfully updated the custom field!');
    expectDeleted(await api.del(`${BASE}/${only.id}`), 'department');
    expectDeleted(await api.del(`${BASE}/${shared.id}`), 'department');
    expect(await deptsOf(PriorityDepartment, { priority_id: priority.id })).toEqual([other.id]);
    expect(await deptsOf(CustomFieldDepartment, { field_id: field.id })).toEqual([other.id]);
    expect(expectSuccess(await api.get(`/api/ticket/customfield/${field.id}`)).depts).toEqual([other.id]);
  });

  it('of two departments of one priority or field deleted at once, deletes one and refuses the other', async () => {
    for (const kind of ['priority', 'custom field'] as const) {
      const [d1, d2] = [await makeDepartment(), await makeDepartment()];
      const name = unique('Shared');
      if (kind === 'priority') expectSuccess(await api.post('/api/ticket/priority', { name, depts: [d1.id, d2.id] }), 'Successfully created new priority!');
      else expectSuccess(await api.post('/api/ticket/customfield', { name, type: 8, depts: [d1.id, d2.id] }), 'Successfully created new custom field!');
      // The first deletion has run and not committed when the second starts: the second waits for
      // it, then sees the link it removed.
      const second = await raceAfterHeld(
        async (t) => departmentResource.destroy!((await Department.findByPk(d1.id, { transaction: t, lock: t.LOCK.UPDATE }))!, { transaction: t }),
        () => api.del(`${BASE}/${d2.id}`).then((res) => res),
        'FOR UPDATE', 'the second deletion to wait for the first',
      );
      expectError(second, 422, `The department cannot be deleted because it is the only department of the ${kind} "${name}": give it another department first.`);
      expect(await Department.findByPk(d2.id)).not.toBeNull();
    }
  });

  it('refuses the last department left', async () => {
    // Other test files share this database: the other departments are removed in a transaction
    // that is rolled back (their tickets' foreign keys are not checked on its connection meanwhile).
    const keep = await makeDepartment();
    const t = await sequelize().transaction();
    try {
      await sequelize().query('SET FOREIGN_KEY_CHECKS = 0', { transaction: t });
      await sequelize().query('UPDATE departments SET parent_id = NULL', { transaction: t });
      await Department.destroy({ where: { id: { [Op.ne]: keep.id } }, transaction: t });
      const err = await departmentResource.destroy!(keep, { transaction: t }).then(() => null, (e) => e);
      expect(err).toBeInstanceOf(ValidationError);
      expect(err.message).toBe('The department cannot be deleted because it is the only department: a help desk needs at least one.');
    } finally {
      await sequelize().query('SET FOREIGN_KEY_CHECKS = 1', { transaction: t });
      await t.rollback();
    }
    expect(await Department.count()).toBeGreaterThan(1);
  });
});

describe('POST /api/ticket/department', () => {
  const create = async (form: Record<string, unknown>) =>
    expectSuccess(await api.post(BASE, { name: unique('Sales'), ...form }), 'Successfully created new department!');

  it('creates a department with the defaults (order: after the last), linked to the default brand, mapping the shipped email templates', async () => {
    const name = unique('Sales');
    const last = Number((await Department.max('order')) ?? 0);
    const data = expectSuccess(await api.post(BASE, { name }), 'Successfully created new department!');
    expect(Object.keys(data).sort()).toEqual([...DEPARTMENT_KEYS].sort());
    expect(data).toMatchObject({
      name, description: null, order: last + 1, parent_id: null, public: 1, registered_only: 0, ticket_number_format: null, default_assignedto: null,
      notify_frontend_ticket: 1, notify_email_ticket: 1, notify_operators: 1, disable_user_email_replies: 0, email_templates: await shipped(),
      emails: [], groups: [], operators: [], translations: [],
    });
    expect((await DepartmentBrand.findAll({ where: { department_id: data.id } })).map((l) => l.brand_id)).toEqual([1]);
    expect(ids(expectList(await api.get(BASE, { brand_id: 1, limit: 1000 })))).toContain(data.id);
    expect(expectSuccess(await api.get(`${BASE}/${data.id}`))).toEqual(data);
    // `email_templates=` (empty): none.
    expect(expectSuccess(await api.post(BASE, { name: unique('Quiet'), email_templates: '' }), 'Successfully created new department!').email_templates).toEqual(NO_TEMPLATES);
  });

  it('refuses an email template id that is no email template, and writes nothing', async () => {
    const name = unique('dept');
    expectError(await api.post(BASE, { name, email_templates: { user_ticket_reply: 4294967 } }), 422, 'The selected email templates.user ticket reply is invalid.');
    expect(await Department.count({ where: { name } })).toBe(0);
  });

  it('refuses a template of another key (an operator\'s mail, the feedback request), and takes a brand\'s own version of the key', async () => {
    const name = unique('dept');
    const t = await shipped();
    const feedback = (await EmailTemplate.findOne({ where: { brand_id: null, name: 'user_feedback_request' } }))!;
    for (const id of [t.operator_ticket_opened, feedback.id]) {
      expectError(await api.post(BASE, { name, email_templates: { user_ticket_opened: id } }), 422, 'The selected email templates.user ticket opened is invalid.');
    }
    expect(await Department.count({ where: { name } })).toBe(0);
    const dept = await makeDepartment({ email_templates: JSON.stringify(t) });
    expectError(await api.put(`${BASE}/${dept.id}`, { email_templates: { operator_ticket_note: t.user_ticket_reply } }), 422, 'The selected email templates.operator ticket note is invalid.');
    expect(emailTemplates((await Department.findByPk(dept.id))!.email_templates)).toEqual(t);
    const brand = await Brand.create({ name: unique('brand') });
    const own = await EmailTemplate.create({ brand_id: brand.id, name: 'user_ticket_opened', subject: 'Hello', contents: '<p>Hello</p>' });
    expect(updated(await api.put(`${BASE}/${dept.id}`, { email_templates: { user_ticket_opened: own.id } })).email_templates).toEqual({ ...t, user_ticket_opened: own.id });
  });

  it('stores every field, links, templates and translations', async () => {
    const brand = await Brand.create({ name: unique('brand') });
    const group = await Group.create({ type: 'operator', name: unique('group') });
    const [op1, op2] = [await makeOperator(), await makeOperator()];
    const parent = await makeDepartment();
    const templates: Record<string, number> = { ...(await shipped()), user_ticket_opened: (await EmailTemplate.create({ brand_id: brand.id, name: 'user_ticket_opened', subject: 'Hi', contents: '<p>Hi</p>' })).id };
    const data = await create({
      description: 'Buying things', order: 3, parent_id: parent.id, public: 0, registered_only: 1, ticket_number_format: 'SALES-%N{5}',
      default_assignedto: op1.id, notify_frontend_ticket: 0, notify_email_ticket: 'false', notify_operators: 0, disable_user_email_replies: 1,
      brand: [brand.id, 1], groups: [group.id], operators: [op2.id, op1.id],
      email_templates: { user_ticket_opened: templates.user_ticket_opened, operator_ticket_note: '-1', user_ticket_reply: String(templates.user_ticket_reply) },
      'name:fr': 'Ventes', 'description:fr': 'Acheter',
    });
    expect(data).toMatchObject({
      description: 'Buying things', order: 3, parent_id: parent.id, public: 0, registered_only: 1, ticket_number_format: 'SALES-%N{5}',
      default_assignedto: op1.id, notify_frontend_ticket: 0, notify_email_ticket: 0, notify_operators: 0, disable_user_email_replies: 1,
      email_templates: { ...templates, operator_ticket_note: -1 },
      translations: [{ department_id: data.id, name: 'Ventes', description: 'Acheter', locale: 'fr' }],
    });
    expect(data.groups.map((g: any) => g.id)).toEqual([group.id]);
    expect(data.groups[0].pivot).toEqual({ department_id: data.id, group_id: group.id });
    expect(data.operators.map((o: any) => o.id)).toEqual([op1.id, op2.id]);
    expect((await DepartmentBrand.findAll({ where: { department_id: data.id }, order: [['brand_id', 'ASC']] })).map((l) => l.brand_id)).toEqual([1, brand.id]);
    expect(ids(expectList(await api.get(BASE, { brand_id: brand.id })))).toEqual([data.id]);
    expect(expectSuccess(await api.get(`${BASE}/${data.id}`, { lang: 'fr' }))).toMatchObject({ name: 'Ventes', description: 'Acheter' });
  });

  it('takes a JSON body', async () => {
    const name = unique('Json');
    const data = expectSuccess(await api.postJson(BASE, { name, public: false, email_templates: { operator_assigned: -1 }, brand: [] }), 'Successfully created new department!');
    expect(data).toMatchObject({ name, public: 0, email_templates: { ...(await shipped()), operator_assigned: -1 } });
    expect(await DepartmentBrand.count({ where: { department_id: data.id } })).toBe(0);
  });

  it.each([
    [{}, 'The name field is required.'],
    [{ name: '  ' }, 'The name field is required.'],
    [{ name: 'x', parent_id: 999999 }, 'The selected parent id is invalid.'],
    [{ name: 'x', order: -5 }, 'The order must be at least 0.'],
    [{ name: 'x', parent_id: 'abc' }, 'The parent id must be an integer.'],
    [{ name: 'x', public: 'maybe' }, 'The public field must be true or false.'],
    [{ name: 'x', brand: [999999] }, 'The selected brand.0 is invalid.'],
    [{ name: 'x', groups: [1, 999999] }, 'The selected groups.1 is invalid.'],
    [{ name: 'x', operators: [999999] }, 'The selected operators.0 is invalid.'],
    [{ name: 'x', default_assignedto: 999999 }, 'The selected default assignedto is invalid.'],
    [{ name: 'x', email_templates: { bogus: 1 } }, 'The email templates.bogus is not an email template of a department.'],
    [{ name: 'x', email_templates: { user_ticket_opened: 0 } }, 'The email templates.user ticket opened must be an email template id, or -1 for none.'],
    [{ name: 'x', email_templates: { user_ticket_opened: 'abc' } }, 'The email templates.user ticket opened must be an email template id, or -1 for none.'],
    [{ name: 'x', email_templates: 'x' }, 'The email templates must be an array keyed by template name (email_templates[user_ticket_opened]=3).'],
    [{ name: 'x', ticket_number_format: '%N{4}' }, /^The ticket number format cannot give every ticket its own number/],
    [{ name: 'x', ticket_number_format: '{number}' }, /^The ticket number format may not contain "\{"/],
    [{ name: 'x', ticket_number_format: '%Q%S' }, 'The ticket number format has an unknown token %Q.'],
  ] as Array<[Record<string, unknown>, string | RegExp]>)('422 %j → %s', async (form, message) => {
    const before = await Department.count();
    expectError(await api.post(BASE, form), 422, message);
    expect(await Department.count()).toBe(before);
  });

  it('refuses a user group, and a user as operator or default assignee', async () => {
    const userGroup = await Group.create({ type: 'user', name: unique('ugroup') });
    const customer = await User.create({ type: 'user', brand_id: 1, email: `${unique('c')}@example.com` });
    expectError(await api.post(BASE, { name: 'x', groups: [userGroup.id] }), 422, 'The selected groups.0 is invalid.');
    expectError(await api.post(BASE, { name: 'x', operators: [customer.id] }), 422, 'The selected operators.0 is invalid.');
    expectError(await api.post(BASE, { name: 'x', default_assignedto: customer.id }), 422, 'The selected default assignedto is invalid.');
  });
});

describe('PUT /api/ticket/department/{id}', () => {
  it('updates only what is sent', async () => {
    const dept = await makeDepartment({ description: 'keep', order: 4, email_templates: JSON.stringify({ user_ticket_opened: 3, operator_assigned: 4 }) });
    const name = unique('Renamed');
    const note = (await shipped()).operator_ticket_note;
    const data = updated(await api.put(`${BASE}/${dept.id}`, { name, notify_operators: 0, email_templates: { operator_assigned: -1, operator_ticket_note: note } }));
    expect(data).toMatchObject({
      id: dept.id, name, description: 'keep', order: 4, notify_operators: 0, public: 1,
      email_templates: { ...NO_TEMPLATES, user_ticket_opened: 3, operator_ticket_note: note },
    });
    expect(data.updated_at).toBeGreaterThanOrEqual(dept.updated_at);
    // An empty value resets every template to none; empty values clear the optional fields.
    const cleared = updated(await api.put(`${BASE}/${dept.id}`, { email_templates: '', description: '', ticket_number_format: '' }));
    expect(cleared).toMatchObject({ email_templates: NO_TEMPLATES, description: null, ticket_number_format: null });
  });

  it('replaces brands, groups and operators, and clears them with an empty value', async () => {
    const dept = await makeDepartment();
    const [g1, g2] = [await Group.create({ type: 'operator', name: unique('g') }), await Group.create({ type: 'operator', name: unique('g') })];
    const [op1, op2] = [await makeOperator(), await makeOperator()];
    const brand = await Brand.create({ name: unique('brand') });
    await DepartmentGroup.create({ department_id: dept.id, group_id: g1.id });
    await OperatorDepartment.create({ department_id: dept.id, user_id: op1.id });
    await DepartmentBrand.create({ department_id: dept.id, brand_id: 1 });
    const data = updated(await api.put(`${BASE}/${dept.id}`, { groups: [g2.id], operators: [op2.id], brand: [brand.id] }));
    expect(data.groups.map((g: any) => g.id)).toEqual([g2.id]);
    expect(data.operators.map((o: any) => o.id)).toEqual([op2.id]);
    expect((await DepartmentBrand.findAll({ where: { department_id: dept.id } })).map((l) => l.brand_id)).toEqual([brand.id]);
    // Not sent: unchanged.
    expect(updated(await api.put(`${BASE}/${dept.id}`, { order: 2 })).groups.map((g: any) => g.id)).toEqual([g2.id]);
    const cleared = updated(await api.put(`${BASE}/${dept.id}`, { groups: '', operators: '', brand: '' }));
    expect(cleared).toMatchObject({ groups: [], operators: [] });
    expect(await DepartmentBrand.count({ where: { department_id: dept.id } })).toBe(0);
  });

  it('keeps a brand that one of its emails uses (422, nothing changed); a brand only its tickets have can go, and those tickets keep working', async () => {
    const brand = await Brand.create({ name: unique('Brand') });
    const dept = await makeDepartment({ description: 'before' });
    await DepartmentBrand.bulkCreate([{ department_id: dept.id, brand_id: 1 }, { department_id: dept.id, brand_id: brand.id }]);
    const address = `${unique('box')}@example.com`;
    const box = await DepartmentEmail.create({ department_id: dept.id, brand_id: brand.id, address });
    const brandsOf = async (id: number) => (await DepartmentBrand.findAll({ where: { department_id: id }, order: [['brand_id', 'ASC']] })).map((l) => l.brand_id);
    const refusal = `The brand "${brand.name}" cannot be removed from the department because its email ${address} uses it: give the email another brand first.`;
    for (const sent of [[1], '']) {
      expectError(await api.put(`${BASE}/${dept.id}`, { brand: sent, description: 'after' }), 422, refusal);
      expect(await brandsOf(dept.id)).toEqual([1, brand.id]);
      expect((await Department.findByPk(dept.id))!.description).toBe('before');
    }
    // Sending the brand again, or adding one, is no removal.
    const other = await Brand.create({ name: unique('Brand') });
    updated(await api.put(`${BASE}/${dept.id}`, { brand: [brand.id, other.id] }));
    expect(await brandsOf(dept.id)).toEqual([brand.id, other.id]);
    // Once the email has another brand of the department, the brand can go.
    expectSuccess(await api.put(`${BASE}/${dept.id}/email/${box.id}`, { brand_id: other.id }), 'Successfully updated the department email!');
    updated(await api.put(`${BASE}/${dept.id}`, { brand: [other.id] }));
    expect(await brandsOf(dept.id)).toEqual([other.id]);

    // A ticket of a brand the department no longer has: new ones of that brand are refused there,
    // the existing one is still shown, answered and updated.
    const ctx = await ticketContext();
    const customer = await User.create({ type: 'user', brand_id: brand.id, email: `${unique('c')}@example.com` });
    const open = (department: number) => api.post('/api/ticket/ticket', {
      brand: brand.id, user: customer.id, department, status: ctx.openStatus, priority: ctx.priorityId, subject: unique('s'), text: 'Hello', send_user_email: 0, send_operators_email: 0,
    });
    const served = await makeDepartment();
    await DepartmentBrand.bulkCreate([{ department_id: served.id, brand_id: 1 }, { department_id: served.id, brand_id: brand.id }]);
    const ticket = expectSuccess(await open(served.id), 'Successfully created new ticket!');
    updated(await api.put(`${BASE}/${served.id}`, { brand: [1] }));
    expectError(await open(served.id), 422, 'The selected department is invalid.');
    expect(expectSuccess(await api.get(`/api/ticket/ticket/${ticket.id}`))).toMatchObject({ brand_id: brand.id, department_id: served.id });
    expectSuccess(await api.post('/api/ticket/message', { ticket_id: ticket.id, user_id: customer.id, text: 'Still there?' }), 'Successfully created new message!');
    expect(expectSuccess(await api.put(`/api/ticket/ticket/${ticket.id}`, { status: ctx.otherStatus, subject: 'Renamed' }), 'Successfully updated the ticket!'))
      .toMatchObject({ status_id: ctx.otherStatus, subject: 'Renamed', brand_id: brand.id, department_id: served.id });
  });

  it('moves a department under another and back to the top (0 or empty)', async () => {
    const [a, b] = [await makeDepartment(), await makeDepartment()];
    expect(updated(await api.put(`${BASE}/${b.id}`, { parent_id: a.id })).parent_id).toBe(a.id);
    expect(ids(expectList(await api.get(BASE, { parent_id: a.id })))).toEqual([b.id]);
    expect(updated(await api.put(`${BASE}/${b.id}`, { parent_id: 0 })).parent_id).toBeNull();
    await b.update({ parent_id: a.id });
    expect(updated(await api.put(`${BASE}/${b.id}`, { parent_id: '' })).parent_id).toBeNull();
  });

  it('refuses a cycle: the department itself or one of its descendants as parent', async () => {
    const top = await makeDepartment();
    const mid = await makeDepartment({ parent_id: top.id });
    const leaf = await makeDepartment({ parent_id: mid.id });
    const message = 'The parent id may not be the department itself or one of its sub-departments.';
    expectError(await api.put(`${BASE}/${top.id}`, { parent_id: top.id }), 422, message);
    expectError(await api.put(`${BASE}/${top.id}`, { parent_id: mid.id }), 422, message);
    expectError(await api.put(`${BASE}/${top.id}`, { parent_id: leaf.id }), 422, message);
    expectError(await api.put(`${BASE}/${mid.id}`, { parent_id: leaf.id }), 422, message);
    expectError(await api.put(`${BASE}/${mid.id}`, { parent_id: 999999 }), 422, 'The selected parent id is invalid.');
    expect((await Department.findByPk(top.id))?.parent_id).toBeNull();
    // A sibling subtree is fine.
    const other = await makeDepartment();
    expect(updated(await api.put(`${BASE}/${top.id}`, { parent_id: other.id })).parent_id).toBe(other.id);
    expect(updated(await api.put(`${BASE}/${leaf.id}`, { parent_id: top.id })).parent_id).toBe(top.id);
  });

  it('validates like create, and 404 first', async () => {
    const dept = await makeDepartment();
    expectError(await api.put(`${BASE}/${dept.id}`, { ticket_number_format: '%N{3}' }), 422, /^The ticket number format cannot give every ticket its own number/);
    expectError(await api.put(`${BASE}/${dept.id}`, { name: '' }), 422, 'The name field is required.');
    expectError(await api.put(`${BASE}/${dept.id}`, { email_templates: { nope: 1 } }), 422, 'The email templates.nope is not an email template of a department.');
    expectNotFound(await api.put(`${BASE}/999999`, { name: '' }), 'department');
    expect((await Department.findByPk(dept.id))?.name).toBe(dept.name);
  });

  it('replaces translations when one is sent', async () => {
    const dept = expectSuccess(await api.post(BASE, { name: unique('T'), 'name:fr': 'Un', 'name:de': 'Eins' }), 'Successfully created new department!');
    expect(dept.translations).toHaveLength(2);
    const data = updated(await api.put(`${BASE}/${dept.id}`, { 'name:es': 'Uno' }));
    expect(data.translations).toEqual([{ department_id: dept.id, name: 'Uno', description: null, locale: 'es' }]);
  });

  it('clears the default assignee when that operator is deleted', async () => {
    const op = await makeOperator();
    const dept = await makeDepartment({ default_assignedto: op.id });
    await op.destroy();
    expect(expectSuccess(await api.get(`${BASE}/${dept.id}`)).default_assignedto).toBeNull();
  });
});
