import { Op } from 'sequelize';
import {
  Brand, Department, DepartmentBrand, DepartmentEmail, DepartmentGroup, Group, OperatorDepartment, User,
} from '../../src/db/models';
import { countQueries, sequelize } from '../../src/db/sequelize';
import { HttpError } from '../../src/http/errors';
import { EMAIL_TEMPLATE_KEYS, departmentResource } from '../../src/ticket/department';
import { useApi, unique } from '../helpers/app';
import { expectDeleted, expectError, expectList, expectNotFound, expectSuccess } from '../helpers/envelope';

const api = useApi();
const BASE = '/api/ticket/department';
const DEPARTMENT_KEYS = [
  'id', 'name', 'description', 'order', 'parent_id', 'public', 'ticket_number_format', 'default_assignedto', 'notify_frontend_ticket',
  'notify_email_ticket', 'notify_operators', 'disable_user_email_replies', 'email_templates', 'created_at', 'updated_at', 'emails',
  'groups', 'operators',
];
const EMAIL_KEYS = [
  'id', 'department_id', 'address', 'type', 'protocol', 'server', 'username', 'password', 'port', 'encryption', 'consume_all',
  'delete_downloaded', 'created_at', 'updated_at',
];
const NO_TEMPLATES = Object.fromEntries(EMAIL_TEMPLATE_KEYS.map((k) => [k, -1]));

const ids = (data: any[]) => data.map((d) => d.id);

const makeDepartment = (values: Partial<Department> = {}) => Department.create({ name: unique('Dept'), ...values });
const makeOperator = (values: Partial<User> = {}) => User.create({ type: 'operator', email: `${unique('op')}@example.com`, firstname: 'Ada', lastname: 'Lovelace', ...values });

describe('GET /api/ticket/department', () => {
  it('lists the seeded department with its email, groups and fields', async () => {
    const data = expectList(await api.get(BASE, { limit: 1000 }));
    const general = data.find((d) => d.name === 'General Enquiries');
    expect(Object.keys(general).sort()).toEqual([...DEPARTMENT_KEYS].sort());
    expect(general).toMatchObject({
      description: 'Questions of every kind.', order: 1, parent_id: null, public: 1, ticket_number_format: null, default_assignedto: null,
      notify_frontend_ticket: 1, notify_email_ticket: 1, notify_operators: 1, disable_user_email_replies: 0, email_templates: NO_TEMPLATES,
    });
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
      expectError(await api.get(BASE, { parent_id: -1 }), 422, 'The parent id must be at least 1.');
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
      const { result, queries } = await countQueries(async () => api.get(BASE, query));
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
      expect(fifty.queries.length).toBeLessThanOrEqual(7);
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
    await DepartmentEmail.create({ department_id: dept.id, brand_id: 1, address: 'x@example.com' });
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

  it('refuses the last department left', async () => {
    // Other test files share this database: the other departments are removed in a transaction
    // that is rolled back.
    const keep = await makeDepartment();
    const t = await sequelize().transaction();
    try {
      await sequelize().query('UPDATE departments SET parent_id = NULL', { transaction: t });
      await Department.destroy({ where: { id: { [Op.ne]: keep.id } }, transaction: t });
      const err = await departmentResource.destroy!(keep, { transaction: t }).then(() => null, (e) => e);
      expect(err).toBeInstanceOf(HttpError);
      expect({ status: err.status, message: err.message }).toEqual({
        status: 422, message: 'The department cannot be deleted because it is the only department: a help desk needs at least one.',
      });
    } finally {
      await t.rollback();
    }
    expect(await Department.count()).toBeGreaterThan(1);
  });
});

describe('departments cannot be created or updated here', () => {
  it('POST and PUT → 405', async () => {
    const dept = await makeDepartment();
    const post = await api.post(BASE, { name: 'x' });
    expect(post.status).toBe(405);
    expect(post.body).toMatchObject({ status: 'error', data: null });
    const put = await api.put(`${BASE}/${dept.id}`, { name: 'x' });
    expect(put.status).toBe(405);
    expect((await Department.findByPk(dept.id))?.name).toBe(dept.name);
  });
});
