import { Brand, CustomField, CustomFieldDepartment, CustomFieldOption, Department } from '../../src/db/models';
import { useApi, unique } from '../helpers/app';
import { countWarm } from '../helpers/queries';
import { expectDeleted, expectError, expectList, expectNotFound, expectSuccess } from '../helpers/envelope';

const api = useApi();
const BASE = '/api/ticket/customfield';
const FIELD_KEYS = [
  'id', 'name', 'description', 'type', 'order', 'required', 'public', 'encrypted', 'locked', 'purge', 'depts', 'created_at', 'updated_at', 'translations',
  'depends_on_field_id', 'depends_on_option_id', 'brand',
];

const created = (res: any) => expectSuccess(res, 'Successfully created new custom field!');
const updated = (res: any) => expectSuccess(res, 'Successfully updated the custom field!');
const create = async (form: Record<string, unknown> = {}) => created(await api.post(BASE, { name: unique('Order number'), type: 8, ...form }));
const makeDepartment = () => Department.create({ name: unique('Dept') });
const ids = (data: any[]) => data.map((d) => d.id);

describe('POST /api/ticket/customfield', () => {
  it('creates a ticket field with the defaults, without options', async () => {
    const name = unique('Order number');
    const last = Number((await CustomField.max('order', { where: { kind: 'ticket' } })) ?? 0);
    const data = created(await api.post(BASE, { name, type: 8, description: 'From the shop' }));
    expect(Object.keys(data).sort()).toEqual([...FIELD_KEYS].sort());
    expect(data).toMatchObject({
      name, type: 8, description: 'From the shop', order: last + 1, required: 0, public: 1, encrypted: 0, locked: 0, purge: 0, depts: [], translations: [],
      depends_on_field_id: null, depends_on_option_id: null, brand: [],
    });
    expect((await CustomField.findByPk(data.id))?.kind).toBe('ticket');
    expect(expectSuccess(await api.get(`${BASE}/${data.id}`))).toEqual(data);
  });

  it('stores purge, departments and options (options are kept for values, never shown)', async () => {
    const [d1, d2] = [await makeDepartment(), await makeDepartment()];
    const data = await create({ type: 5, purge: 1, depts: [d2.id, d1.id, d2.id], brand: [1], options: [{ value: 'Small' }, { value: 'Large', 'value:fr': 'Grand' }], 'name:fr': 'Taille' });
    expect(data).toMatchObject({ purge: 1, depts: [d1.id, d2.id], brand: [1], translations: [{ field_id: data.id, name: 'Taille', description: null, locale: 'fr' }] });
    expect(data).not.toHaveProperty('options');
    expect((await CustomFieldOption.findAll({ where: { field_id: data.id }, order: [['order', 'ASC']] })).map((o) => o.value)).toEqual(['Small', 'Large']);
    const listed = expectList(await api.get(BASE, { limit: 1000 })).find((f) => f.id === data.id);
    expect(listed).toEqual(data);
  });

  it.each([
    [{ type: 8 }, 'The name field is required.'],
    [{ name: 'x' }, 'The type field is required.'],
    [{ name: 'x', type: 8, purge: 'soon' }, 'The purge field must be true or false.'],
    [{ name: 'x', type: 8, depts: [999999] }, 'The selected depts.0 is invalid.'],
    [{ name: 'x', type: 8, depts: ['abc'] }, 'The depts.0 must be an integer.'],
    [{ name: 'x', type: 8, brand: [999999] }, 'The selected brand.0 is invalid.'],
  ] as Array<[Record<string, unknown>, string]>)('422 %j → %s', async (form, message) => {
    const before = await CustomField.count({ where: { kind: 'ticket' } });
    expectError(await api.post(BASE, form), 422, message);
    expect(await CustomField.count({ where: { kind: 'ticket' } })).toBe(before);
  });
});

describe('GET /api/ticket/customfield', () => {
  it('lists ticket fields only', async () => {
    const userField = await CustomField.create({ kind: 'user', name: unique('uf'), type: 8 });
    const mine = await create();
    const listed = ids(expectList(await api.get(BASE, { limit: 1000 })));
    expect(listed).toContain(mine.id);
    expect(listed).not.toContain(userField.id);
    expectNotFound(await api.get(`${BASE}/${userField.id}`), 'custom field');
  });

  it('filters by department: its fields and the fields of every department', async () => {
    const [d1, d2] = [await makeDepartment(), await makeDepartment()];
    const onlyD1 = await create({ depts: [d1.id] });
    const both = await create({ depts: [d1.id, d2.id] });
    const everywhere = await create();
    const inD1 = ids(expectList(await api.get(BASE, { department_id: d1.id, limit: 1000 })));
    expect(inD1).toEqual(expect.arrayContaining([onlyD1.id, both.id, everywhere.id]));
    const inD2 = ids(expectList(await api.get(BASE, { department_id: d2.id, limit: 1000 })));
    expect(inD2).toEqual(expect.arrayContaining([both.id, everywhere.id]));
    expect(inD2).not.toContain(onlyD1.id);
    const res = await api.get(BASE, { department_id: 999999 });
    expect(expectList(res)).toEqual([]);
    expect(res.body.count).toBe(0);
    expectError(await api.get(BASE, { department_id: 'x' }), 422, 'The department id must be an integer.');
  });

  it('filters by brand (shared filter) together with department', async () => {
    const brand = await Brand.create({ name: unique('brand') });
    const dept = await makeDepartment();
    const branded = await create({ brand: [brand.id], depts: [dept.id] });
    const otherBrand = await create({ brand: [1], depts: [dept.id] });
    const listed = ids(expectList(await api.get(BASE, { brand_id: brand.id, department_id: dept.id, limit: 1000 })));
    expect(listed).toContain(branded.id);
    expect(listed).not.toContain(otherBrand.id);
  });

  it('runs the same number of queries for limit=1 and limit=50, loading no options', async () => {
    for (let i = 0; i < 4; i++) await create({ type: 5, options: [{ value: 'a' }], depts: [(await makeDepartment()).id] });
    const measure = async (limit: number) => {
      const { result, queries } = await countWarm(async () => api.get(BASE, { limit }));
      expectList(result);
      return queries.filter((q) => !/api_tokens|ip_bans/.test(q));
    };
    await measure(1);
    const one = await measure(1);
    const fifty = await measure(50);
    expect(fifty.length).toBe(one.length);
    expect(fifty.some((q) => /custom_field_options/.test(q))).toBe(false);
    expect(fifty.length).toBeLessThanOrEqual(5); // count, page, departments, brands, translations
  });
});

describe('PUT /api/ticket/customfield/{id}', () => {
  it('updates purge and replaces departments when sent; an empty value means every department', async () => {
    const [d1, d2] = [await makeDepartment(), await makeDepartment()];
    const field = await create({ depts: [d1.id] });
    const data = updated(await api.put(`${BASE}/${field.id}`, { purge: 1, depts: [d2.id] }));
    expect(data).toMatchObject({ purge: 1, depts: [d2.id] });
    expect(updated(await api.put(`${BASE}/${field.id}`, { name: 'renamed' }))).toMatchObject({ name: 'renamed', purge: 1, depts: [d2.id] });
    expect(updated(await api.put(`${BASE}/${field.id}`, { depts: '', purge: 0 }))).toMatchObject({ purge: 0, depts: [] });
    expect(await CustomFieldDepartment.count({ where: { field_id: field.id } })).toBe(0);
  });

  it('validates, and 404 for an unknown field or a field of another kind', async () => {
    const field = await create();
    expectError(await api.put(`${BASE}/${field.id}`, { depts: [999999] }), 422, 'The selected depts.0 is invalid.');
    const orgField = await CustomField.create({ kind: 'organisation', name: unique('of'), type: 8 });
    expectNotFound(await api.put(`${BASE}/${orgField.id}`, { purge: 1 }), 'custom field');
    expectNotFound(await api.put(`${BASE}/999999`, { purge: 1 }), 'custom field');
    expect((await CustomField.findByPk(orgField.id))?.purge).toBe(0);
  });
});

describe('DELETE /api/ticket/customfield/{id}', () => {
  it('deletes a field with its department links; deleting a department drops its links', async () => {
    const [d1, d2] = [await makeDepartment(), await makeDepartment()];
    const field = await create({ depts: [d1.id, d2.id] });
    await d1.destroy();
    expect(expectSuccess(await api.get(`${BASE}/${field.id}`)).depts).toEqual([d2.id]);
    expectDeleted(await api.del(`${BASE}/${field.id}`), 'custom field');
    expect(await CustomFieldDepartment.count({ where: { field_id: field.id } })).toBe(0);
    expectNotFound(await api.get(`${BASE}/${field.id}`), 'custom field');
  });
});

describe('GET /api/ticket/customfield/{customfield}/option', () => {
  it('lists and shows a ticket field\'s options, with their translations: the ids a ticket\'s value names', async () => {
    const field = await create({ type: 5, options: [{ value: 'Small' }, { value: 'Large', 'value:fr': 'Grand' }] });
    const options = expectList(await api.get(`${BASE}/${field.id}/option`, { order_column: 'order' }));
    expect(options.map((o) => [o.value, o.order, o.field_id])).toEqual([['Small', 0, field.id], ['Large', 1, field.id]]);
    expect(Object.keys(options[0]).sort()).toEqual(['created_at', 'field_id', 'id', 'order', 'translations', 'updated_at', 'value']);
    expect(options[1].translations).toMatchObject([{ locale: 'fr', value: 'Grand' }]);
    expect(expectSuccess(await api.get(`${BASE}/${field.id}/option/${options[1].id}`, { lang: 'fr' }))).toMatchObject({ id: options[1].id, value: 'Grand' });

    // The id listed is what a ticket takes.
    const dept = await Department.findOne({ order: [['id', 'ASC']] });
    const ticket = await api.post('/api/ticket/ticket', {
      department: dept!.id, status: 1, priority: 1, subject: 'Sized', text: 'x', user_email: `${unique('o')}@example.com`, customfield: { [field.id]: options[1].id },
    });
    expect(expectSuccess(ticket, 'Successfully created new ticket!').customfields).toMatchObject([{ field_id: field.id, value: String(options[1].id) }]);
  });

  it('404 for an unknown field, a field of another kind, or an option of another field', async () => {
    const field = await create({ type: 5, options: [{ value: 'A' }] });
    const other = await create({ type: 5, options: [{ value: 'B' }] });
    const [otherOption] = expectList(await api.get(`${BASE}/${other.id}/option`));
    const userField = await CustomField.create({ kind: 'user', name: unique('uf'), type: 5 });
    await CustomFieldOption.create({ field_id: userField.id, value: 'U' });
    expectNotFound(await api.get(`${BASE}/${userField.id}/option`), 'custom field');
    expectNotFound(await api.get(`${BASE}/999999/option`), 'custom field');
    expectNotFound(await api.get(`${BASE}/${field.id}/option/${otherOption.id}`), 'custom field option');
  });
});

describe('options of a custom field', () => {
  it('refuses two of one value in a request and changes nothing', async () => {
    const field = await create({ type: 5, options: [{ value: 'Blue' }, { value: 'Green' }] });
    const before = await CustomFieldOption.findAll({ where: { field_id: field.id }, order: [['id', 'ASC']], raw: true });
    expectError(await api.put(`${BASE}/${field.id}`, { options: [{ value: 'Green' }, { value: 'Green' }] }), 422, 'The options.1.value field has a duplicate value.');
    expect(await CustomFieldOption.findAll({ where: { field_id: field.id }, order: [['id', 'ASC']], raw: true })).toEqual(before);
    expectError(await api.post(BASE, { name: unique('dup'), type: 4, options: [{ value: 'A' }, { value: 'B' }, { value: 'A' }] }), 422, 'The options.2.value field has a duplicate value.');
  });
});
