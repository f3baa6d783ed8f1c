import { Brand, CustomField, CustomFieldOption, CustomFieldValue, Translation, User } from '../../src/db/models';
import { useApi, unique } from '../helpers/app';
import { countWarm } from '../helpers/queries';
import { expectDeleted, expectError, expectList, expectNotFound, expectSuccess } from '../helpers/envelope';

const api = useApi();
const BASE = '/api/user/customfield';
const FIELD_KEYS = [
  'id', 'name', 'description', 'type', 'order', 'required', 'public', 'encrypted', 'locked', 'created_at', 'updated_at',
  'depends_on_field_id', 'depends_on_option_id', 'brand', 'options', 'translations',
];

/** A brand for required fields, so they never apply to the users other test files create. */
const ownBrand = async () => Brand.create({ name: unique('brand') });

async function create(form: Record<string, unknown>): Promise<any> {
  return expectSuccess(await api.post(BASE, { type: 8, ...form, name: form.name ?? unique('field') }), 'Successfully created new custom field!');
}

describe('POST /api/user/customfield', () => {
  it('creates a user custom field and returns it', async () => {
    const name = unique('Favourite colour');
    const data = expectSuccess(await api.post(BASE, {
      // Required fields get a brand of their own: other test files of this worker create users of brand 1.
      name, description: 'Pick one', type: 7, required: 1, public: 0, locked: 1, order: 2, brand: [(await ownBrand()).id],
      options: [{ value: 'Red', 'value:fr': 'Rouge' }, { value: 'Blue' }],
    }), 'Successfully created new custom field!');
    expect(Object.keys(data).sort()).toEqual([...FIELD_KEYS].sort());
    expect(data).toMatchObject({ name, description: 'Pick one', type: 7, required: 1, public: 0, encrypted: 0, locked: 1, order: 2 });
    expect(data.options.map((o: any) => o.value)).toEqual(['Red', 'Blue']);
    expect(data.options[0].translations).toEqual([{ option_id: data.options[0].id, value: 'Rouge', locale: 'fr' }]);
    expect((await CustomField.findByPk(data.id))?.kind).toBe('user');
  });

  it('applies the defaults (order: after the last user field)', async () => {
    const last = Number((await CustomField.max('order', { where: { kind: 'user' } })) ?? 0);
    const data = await create({});
    expect(data).toMatchObject({
      description: null, order: last + 1, required: 0, public: 1, encrypted: 0, locked: 0, options: [], translations: [],
      depends_on_field_id: null, depends_on_option_id: null, brand: [],
    });
  });

  it('shows its dependency and brands, as written, in the create, show, list and update responses', async () => {
    const parent = await create({ type: 5, options: [{ value: 'a' }, { value: 'b' }] });
    const [b1, b2] = [(await ownBrand()).id, (await ownBrand()).id];
    const data = await create({ depends_on_field_id: parent.id, depends_on_option_id: parent.options[1].id, brand: [b2, b1] });
    const written = { depends_on_field_id: parent.id, depends_on_option_id: parent.options[1].id, brand: [b1, b2].sort((x, y) => x - y) };
    expect(data).toMatchObject(written);
    expect(expectSuccess(await api.get(`${BASE}/${data.id}`))).toMatchObject(written);
    expect(expectList(await api.get(BASE, { limit: 1000 })).find((f) => f.id === data.id)).toMatchObject(written);
    const cleared = expectSuccess(await api.put(`${BASE}/${data.id}`, { depends_on_option_id: '', brand: '' }), 'Successfully updated the custom field!');
    expect(cleared).toMatchObject({ depends_on_field_id: parent.id, depends_on_option_id: null, brand: [] });
  });

  it.each([
    [{ type: 8 }, 'The name field is required.'],
    [{ name: 'x' }, 'The type field is required.'],
    [{ name: 'x', type: 12 }, 'The selected type is invalid.'],
    [{ name: 'x', type: 8, order: -3 }, 'The order must be at least 0.'],
    [{ name: 'x', type: 5, options: [{ value: 'a', order: -1 }] }, 'The options.0.order must be at least 0.'],
    [{ name: 'x', type: 8, encrypted: 'no way' }, 'The encrypted field must be true or false.'],
    [{ name: 'x', type: 8, brand: [999999] }, 'The selected brand.0 is invalid.'],
  ] as Array<[Record<string, unknown>, string]>)('422 %j → %s', async (form, message) => {
    expectError(await api.post(BASE, form), 422, message);
  });

  it('refuses a dependency on an organisation field', async () => {
    const orgField = await CustomField.create({ kind: 'organisation', name: unique('org field'), type: 5 });
    expectError(await api.post(BASE, { name: 'x', type: 8, depends_on_field_id: orgField.id }), 422, 'The selected depends on field id is invalid.');
  });

  it('depends on another user field', async () => {
    const parent = await create({ type: 2, options: [{ value: 'a' }, { value: 'b' }] });
    const child = await create({ depends_on_field_id: parent.id, depends_on_option_id: parent.options[1].id });
    expect(await CustomField.findByPk(child.id)).toMatchObject({ depends_on_field_id: parent.id, depends_on_option_id: parent.options[1].id });
  });
});

describe('GET /api/user/customfield/{id}', () => {
  it('shows a user field, translated with lang', async () => {
    const created = await create({ name: 'Team', 'name:fr': 'Équipe', 'description:fr': 'Son équipe' });
    expect(expectSuccess(await api.get(`${BASE}/${created.id}`))).toEqual(created);
    expect(expectSuccess(await api.get(`${BASE}/${created.id}`, { lang: 'fr' }))).toMatchObject({ name: 'Équipe', description: 'Son équipe' });
  });

  it('404 for unknown ids and for organisation fields', async () => {
    const orgField = await CustomField.create({ kind: 'organisation', name: unique('org field'), type: 8 });
    for (const id of [999999, orgField.id]) expectNotFound(await api.get(`${BASE}/${id}`), 'custom field');
  });
});

describe('PUT /api/user/customfield/{id}', () => {
  it('updates the given fields', async () => {
    const created = await create({ description: 'before', brand: [(await ownBrand()).id] });
    const data = expectSuccess(await api.put(`${BASE}/${created.id}`, { name: 'After', required: 1, encrypted: 1, order: 4 }), 'Successfully updated the custom field!');
    expect(data).toMatchObject({ id: created.id, name: 'After', description: 'before', required: 1, encrypted: 1, order: 4 });
  });

  it('replaces the options', async () => {
    const created = await create({ type: 4, options: [{ value: 'a' }, { value: 'b' }] });
    const data = expectSuccess(await api.put(`${BASE}/${created.id}`, { options: [{ id: created.options[1].id, value: 'b2' }, { value: 'c' }] }), 'Successfully updated the custom field!');
    expect(data.options.map((o: any) => o.value)).toEqual(['b2', 'c']);
    expect(data.options[0].id).toBe(created.options[1].id);
    expect(await CustomFieldOption.findByPk(created.options[0].id)).toBeNull();
  });

  it('keeps an option sent again by value (the spec\'s form, no id), with the values and translations that name it', async () => {
    const created = await create({ type: 5, options: [{ value: 'Red', 'value:fr': 'Rouge' }, { value: 'Blue' }] });
    const [red, blue] = created.options.map((o: any) => o.id);
    const user = await User.create({ type: 'user', brand_id: 1, email: `${unique('u')}@example.com` });
    await CustomFieldValue.create({ field_id: created.id, owner_id: user.id, value: String(blue) });
    const data = expectSuccess(await api.put(`${BASE}/${created.id}`, { options: [{ value: 'Red' }, { value: 'Blue' }, { value: 'Green' }] }), 'Successfully updated the custom field!');
    expect(data.options.map((o: any) => [o.id, o.value])).toEqual([[red, 'Red'], [blue, 'Blue'], [expect.any(Number), 'Green']]);
    expect(data.options[0].translations).toEqual([{ option_id: red, value: 'Rouge', locale: 'fr' }]);
    expect((await CustomFieldValue.findOne({ where: { field_id: created.id, owner_id: user.id } }))?.value).toBe(String(blue));
    // A value left out is still deleted, with what chose it.
    expectSuccess(await api.put(`${BASE}/${created.id}`, { options: [{ value: 'Red' }] }), 'Successfully updated the custom field!');
    expect(await CustomFieldValue.findOne({ where: { field_id: created.id, owner_id: user.id } })).toBeNull();
    expect(await CustomFieldOption.findByPk(blue)).toBeNull();
  });

  it('removes option ids from stored multiple-option values when options are deleted', async () => {
    const created = await create({ type: 2, options: [{ value: 'a' }, { value: 'b' }, { value: 'c' }] });
    const [a, b, c] = created.options.map((o: any) => o.id);
    const user = await User.create({ type: 'user', brand_id: 1, email: `${unique('u')}@example.com` });
    const other = await User.create({ type: 'user', brand_id: 1, email: `${unique('u')}@example.com` });
    await CustomFieldValue.create({ field_id: created.id, owner_id: user.id, value: `${a},${b}` });
    await CustomFieldValue.create({ field_id: created.id, owner_id: other.id, value: `${b}` });
    expectSuccess(await api.put(`${BASE}/${created.id}`, { options: [{ id: a, value: 'a' }, { id: c, value: 'c' }] }), 'Successfully updated the custom field!');
    expect((await CustomFieldValue.findOne({ where: { field_id: created.id, owner_id: user.id } }))?.value).toBe(String(a));
    expect(await CustomFieldValue.findOne({ where: { field_id: created.id, owner_id: other.id } })).toBeNull();
  });

  it('deletes values that do not fit a new type, and keeps those that do', async () => {
    const text = await create({ type: 8 });
    const area = await create({ type: 8 });
    const user = await User.create({ type: 'user', brand_id: 1, email: `${unique('u')}@example.com` });
    await CustomFieldValue.create({ field_id: text.id, owner_id: user.id, value: 'hello' });
    await CustomFieldValue.create({ field_id: area.id, owner_id: user.id, value: 'hello' });
    expectSuccess(await api.put(`${BASE}/${text.id}`, { type: 3 }), 'Successfully updated the custom field!');
    expectSuccess(await api.put(`${BASE}/${area.id}`, { type: 9 }), 'Successfully updated the custom field!');
    expect(await CustomFieldValue.count({ where: { field_id: text.id } })).toBe(0);
    expect(await CustomFieldValue.count({ where: { field_id: area.id } })).toBe(1);
  });

  it('an update carrying only name:fr deletes the de translation', async () => {
    const created = await create({ 'name:de': 'Abteilung' });
    const data = expectSuccess(await api.put(`${BASE}/${created.id}`, { 'name:fr': 'Service' }), 'Successfully updated the custom field!');
    expect(data.translations).toEqual([{ field_id: created.id, name: 'Service', description: null, locale: 'fr' }]);
    expect(await Translation.count({ where: { record_type: 'customfield', record_id: created.id, locale: 'de' } })).toBe(0);
  });

  it('404 and 422', async () => {
    expectNotFound(await api.put(`${BASE}/999999`, { name: 'x' }), 'custom field');
    const created = await create({});
    expectError(await api.put(`${BASE}/${created.id}`, { type: 'big' }), 422, 'The selected type is invalid.');
    expectError(await api.put(`${BASE}/${created.id}`, { name: '' }), 422, 'The name field is required.');
  });
});

describe('DELETE /api/user/customfield/{id}', () => {
  it('deletes the field and the values users had', async () => {
    const created = await create({});
    const user = await User.create({ type: 'user', brand_id: 1, email: `${unique('u')}@example.com` });
    await CustomFieldValue.create({ field_id: created.id, owner_id: user.id, value: 'x' });
    const res = await api.del(`${BASE}/${created.id}`);
    expectDeleted(res, 'custom field');
    expect(await CustomField.findByPk(created.id)).toBeNull();
    expect(await CustomFieldValue.count({ where: { field_id: created.id } })).toBe(0);
    expectNotFound(await api.del(`${BASE}/${created.id}`), 'custom field');
  });
});

describe('GET /api/user/customfield', () => {
  it('lists user fields only, with paging', async () => {
    const a = await create({});
    const b = await create({ type: 5, options: [{ value: 'x' }] });
    const orgField = await CustomField.create({ kind: 'organisation', name: unique('org field'), type: 8 });
    const res = await api.get(BASE, { limit: 1000 });
    const ids = expectList(res).map((f) => f.id);
    expect(ids).toEqual(expect.arrayContaining([a.id, b.id]));
    expect(ids).not.toContain(orgField.id);
    expect(res.body.count).toBe(await CustomField.count({ where: { kind: 'user' } }));
    const page = await api.get(BASE, { start: 2, limit: 1 });
    expect(expectList(page).map((f) => f.id)).toEqual([ids[1]]);
    expect(page.body.count).toBe(res.body.count);
  });

  it('runs the same number of queries for limit=1 and limit=50', async () => {
    for (let i = 0; i < 10; i++) await create({ type: 7, 'name:fr': `n${i}`, options: [{ value: 'a', 'value:fr': 'b' }] });
    const measure = async (query: Record<string, unknown>) => {
      const { result, queries } = await countWarm(async () => api.get(BASE, query));
      expectList(result);
      return { res: result, queries: queries.filter((q) => !/api_tokens|ip_bans/.test(q)) };
    };
    await api.get(BASE, { order_direction: 'desc' });
    const one = await measure({ order_direction: 'desc', limit: 1 });
    const fifty = await measure({ order_direction: 'desc', limit: 50 });
    expect(one.res.body.data).toHaveLength(1);
    expect(fifty.res.body.data.length).toBeGreaterThanOrEqual(10);
    expect(fifty.queries.length).toBe(one.queries.length);
  });
});
