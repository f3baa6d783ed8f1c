import { Brand, CustomField, CustomFieldBrand, CustomFieldOption, CustomFieldValue, Organisation, Translation } from '../../src/db/models';
import { useApi, unique, nowSec } from '../helpers/app';
import { countWarm } from '../helpers/queries';
import { expectError, expectList, expectNotFound, expectSuccess } from '../helpers/envelope';

const api = useApi();
const BASE = '/api/user/organisationcustomfield';
const FIELD_KEYS = [
  'id', 'name', 'description', 'type', 'order', 'required', 'public', 'encrypted', 'locked', 'created_at', 'updated_at',
  'depends_on_field_id', 'depends_on_option_id', 'brand', 'options', 'translations',
];
const OPTION_KEYS = ['id', 'field_id', 'value', 'order', 'created_at', 'updated_at', 'translations'];


async function create(form: Record<string, unknown>): Promise<any> {
  return expectSuccess(await api.post(BASE, { type: 8, ...form, name: form.name ?? unique('field') }), 'Successfully created new custom field!');
}

describe('POST /api/user/organisationcustomfield', () => {
  it('creates a field with the defaults and returns it', async () => {
    const before = nowSec();
    const name = unique('Company size');
    const last = Number((await CustomField.max('order', { where: { kind: 'organisation' } })) ?? 0);
    const data = expectSuccess(await api.post(BASE, { name, type: 8 }), 'Successfully created new custom field!');
    expect(Object.keys(data).sort()).toEqual([...FIELD_KEYS].sort());
    expect(data).toMatchObject({
      name, description: null, type: 8, order: last + 1, required: 0, public: 1, encrypted: 0, locked: 0, options: [], translations: [],
    });
    expect(data.created_at).toBeGreaterThanOrEqual(before);
    expect(data.updated_at).toBeGreaterThanOrEqual(before);
    const stored = await CustomField.findByPk(data.id);
    expect(stored?.kind).toBe('organisation');
  });

  it('stores every field of the body, booleans as 1/0', async () => {
    // Required fields get a brand of their own: other test files of this worker create organisations of brand 1.
    const brand = await Brand.create({ name: unique('brand') });
    const data = await create({
      brand: [brand.id], description: 'How many people', type: 3, required: 'true', public: 0, encrypted: '1', locked: true, order: 7,
    });
    expect(data).toMatchObject({ description: 'How many people', type: 3, required: 1, public: 0, encrypted: 1, locked: 1, order: 7 });
  });

  it('creates the options of an option type, in order, with their translations', async () => {
    const data = await create({
      type: 5,
      options: [{ value: 'Small', 'value:fr': 'Petite' }, { value: 'Large', 'value:de': 'Groß' }, { value: 'Huge', order: 10 }],
    });
    expect(data.options.map((o: any) => [o.value, o.order])).toEqual([['Small', 0], ['Large', 1], ['Huge', 10]]);
    for (const o of data.options) {
      expect(Object.keys(o).sort()).toEqual([...OPTION_KEYS].sort());
      expect(o.field_id).toBe(data.id);
    }
    expect(data.options[0].translations).toEqual([{ option_id: data.options[0].id, value: 'Petite', locale: 'fr' }]);
    expect(data.options[1].translations).toEqual([{ option_id: data.options[1].id, value: 'Groß', locale: 'de' }]);

    const fr = expectSuccess(await api.get(`${BASE}/${data.id}`, { lang: 'fr' }));
    expect(fr.options.map((o: any) => o.value)).toEqual(['Petite', 'Large', 'Huge']);
    expect(fr.options[0].translations).toBeUndefined();
    expect(fr.options[1].translations).toEqual([{ option_id: data.options[1].id, value: 'Groß', locale: 'de' }]);
  });

  it.each([2, 4, 7])('keeps options for type %i', async (type) => {
    const data = await create({ type, options: [{ value: 'a' }, { value: 'b' }] });
    expect(data.options.map((o: any) => o.value)).toEqual(['a', 'b']);
  });

  it.each([0, 1, 3, 6, 8, 9])('ignores options for type %i', async (type) => {
    const data = await create({ type, options: [{ value: 'a' }] });
    expect(data.options).toEqual([]);
    expect(await CustomFieldOption.count({ where: { field_id: data.id } })).toBe(0);
  });

  it('takes options as JSON, also keyed by index', async () => {
    const res = await api.postJson(BASE, { name: unique('json'), type: 7, options: { 0: { value: 'x' }, 1: { value: 'y' } }, brand: [1] });
    const data = expectSuccess(res, 'Successfully created new custom field!');
    expect(data.options.map((o: any) => o.value)).toEqual(['x', 'y']);
    expect((await CustomFieldBrand.findAll({ where: { field_id: data.id } })).map((b) => b.brand_id)).toEqual([1]);
  });

  it('accepts translations of name and description', async () => {
    const data = await create({ name: 'Industry', description: 'Sector', 'name:fr': 'Secteur', 'description:fr': 'Le secteur' });
    expect(data.translations).toEqual([{ field_id: data.id, name: 'Secteur', description: 'Le secteur', locale: 'fr' }]);
    const fr = expectSuccess(await api.get(`${BASE}/${data.id}`, { lang: 'fr' }));
    expect(fr).toMatchObject({ name: 'Secteur', description: 'Le secteur' });
    expect(fr.translations).toBeUndefined();
  });

  it('sets the brand list and the dependency', async () => {
    const brand = await Brand.create({ name: unique('brand') });
    const parent = await create({ type: 5, options: [{ value: 'yes' }, { value: 'no' }] });
    const child = await create({ depends_on_field_id: parent.id, depends_on_option_id: parent.options[0].id, brand: [1, brand.id] });
    const stored = await CustomField.findByPk(child.id);
    expect(stored).toMatchObject({ depends_on_field_id: parent.id, depends_on_option_id: parent.options[0].id });
    expect((await CustomFieldBrand.findAll({ where: { field_id: child.id }, order: [['brand_id', 'ASC']] })).map((b) => b.brand_id)).toEqual([1, brand.id]);
  });

  describe('422', () => {
    let userField: CustomField;
    let parent: any;
    let other: any;
    beforeAll(async () => {
      userField = await CustomField.create({ kind: 'user', name: unique('user field'), type: 5 });
      parent = await create({ type: 5, options: [{ value: 'one' }] });
      other = await create({ type: 5, options: [{ value: 'two' }] });
    });

    it.each([
      [{ type: 8 }, 'The name field is required.'],
      [{ name: '  ', type: 8 }, 'The name field is required.'],
      [{ name: 'x' }, 'The type field is required.'],
      [{ name: 'x', type: 10 }, 'The selected type is invalid.'],
      [{ name: 'x', type: -1 }, 'The selected type is invalid.'],
      [{ name: 'x', type: 'text' }, 'The selected type is invalid.'],
      [{ name: 'x'.repeat(256), type: 8 }, 'The name may not be greater than 255 characters.'],
      [{ name: 'x', type: 8, required: 'maybe' }, 'The required field must be true or false.'],
      [{ name: 'x', type: 8, public: 2 }, 'The public field must be true or false.'],
      [{ name: 'x', type: 8, order: 'first' }, 'The order must be an integer.'],
      [{ name: 'x', type: 8, brand: [999999] }, 'The selected brand.0 is invalid.'],
      [{ name: 'x', type: 8, brand: [1, 999999] }, 'The selected brand.1 is invalid.'],
      [{ name: 'x', type: 8, brand: ['a'] }, 'The brand.0 must be an integer.'],
      [{ name: 'x', type: 8, depends_on_field_id: 999999 }, 'The selected depends on field id is invalid.'],
      [{ name: 'x', type: 5, options: [{ value: '' }] }, 'The options.0.value field is required.'],
      [{ name: 'x', type: 5, options: [{ value: 'a' }, { value: 'b'.repeat(256) }] }, 'The options.1.value may not be greater than 255 characters.'],
      [{ name: 'x', type: 5, options: 'a' }, 'The options must be an array.'],
      [{ name: 'x', 'name:fr!': 'y', type: 8 }, 'The locale of name:fr! is not a valid ISO-639 code.'],
      [{ name: 'x', 'type:fr': 'y', type: 8 }, 'The type:fr field is not translatable.'],
    ] as Array<[Record<string, unknown>, string]>)('%j → %s', async (form, message) => {
      expectError(await api.post(BASE, form), 422, message);
    });

    it('refuses a dependency on a field of another kind', async () => {
      expectError(await api.post(BASE, { name: 'x', type: 8, depends_on_field_id: userField.id }), 422, 'The selected depends on field id is invalid.');
    });

    it('refuses an option of another field', async () => {
      expectError(await api.post(BASE, { name: 'x', type: 8, depends_on_field_id: parent.id, depends_on_option_id: other.options[0].id }), 422, 'The selected depends on option id is invalid.');
    });

    it('refuses an option without its field', async () => {
      expectError(await api.post(BASE, { name: 'x', type: 8, depends_on_option_id: parent.options[0].id }), 422, 'The depends on field id field is required when depends on option id is present.');
    });

    it('refuses option ids on create', async () => {
      expectError(await api.post(BASE, { name: 'x', type: 5, options: [{ value: 'a' }, { id: parent.options[0].id, value: 'b' }] }), 422, 'The selected options.1.id is invalid.');
    });

    it('refuses an invalid option translation', async () => {
      expectError(await api.post(BASE, { name: 'x', type: 5, options: [{ value: 'a', 'value:f!': 'b' }] }), 422, 'The locale of options.0.value:f! is not a valid ISO-639 code.');
      expectError(await api.post(BASE, { name: 'x', type: 5, options: [{ value: 'a', 'value:zz': 'b' }] }), 422, 'The locale of options.0.value:zz is not a valid ISO-639 code.');
    });

    it('creates nothing when it refuses', async () => {
      const name = unique('refused');
      expectError(await api.post(BASE, { name, type: 5, brand: [999999], options: [{ value: 'a' }] }), 422, 'The selected brand.0 is invalid.');
      expect(await CustomField.count({ where: { name } })).toBe(0);
    });
  });
});

describe('GET /api/user/organisationcustomfield/{id}', () => {
  it('shows a field', async () => {
    const created = await create({ type: 4, options: [{ value: 'a' }] });
    const data = expectSuccess(await api.get(`${BASE}/${created.id}`));
    expect(data).toEqual(created);
  });

  it.each(['999999', 'abc', '0', '1.5'])('404 for %s', async (id) => {
    expectNotFound(await api.get(`${BASE}/${id}`), 'custom field');
  });

  it('404 for a user custom field', async () => {
    const userField = await CustomField.create({ kind: 'user', name: unique('user field'), type: 8 });
    expectNotFound(await api.get(`${BASE}/${userField.id}`), 'custom field');
    expectNotFound(await api.put(`${BASE}/${userField.id}`, { name: 'x' }), 'custom field');
    expectNotFound(await api.del(`${BASE}/${userField.id}`), 'custom field');
    expect(await CustomField.findByPk(userField.id)).not.toBeNull();
  });
});

describe('PUT /api/user/organisationcustomfield/{id}', () => {
  it('changes only the given fields', async () => {
    const brand = await Brand.create({ name: unique('brand') });
    const created = await create({ description: 'd', required: 1, order: 3, brand: [brand.id] });
    const data = expectSuccess(await api.put(`${BASE}/${created.id}`, { name: 'Renamed', public: 0 }), 'Successfully updated the custom field!');
    expect(data).toMatchObject({ id: created.id, name: 'Renamed', description: 'd', type: 8, required: 1, public: 0, order: 3 });
  });

  it('clears the description with an empty value', async () => {
    const created = await create({ description: 'd' });
    expect(expectSuccess(await api.put(`${BASE}/${created.id}`, { description: '' }), 'Successfully updated the custom field!').description).toBeNull();
  });

  it('replaces the options: updates listed ones in place, adds new ones, deletes the rest', async () => {
    const created = await create({ type: 5, options: [{ value: 'a', 'value:fr': 'A-fr' }, { value: 'b' }, { value: 'c', 'value:fr': 'C-fr' }] });
    const [a, b, c] = created.options;
    const org = await Organisation.create({ brand_id: 1, name: unique('org') });
    await CustomFieldValue.create({ field_id: created.id, owner_id: org.id, value: String(c.id) });

    const data = expectSuccess(await api.put(`${BASE}/${created.id}`, {
      options: [{ id: b.id, value: 'B' }, { value: 'd' }, { id: a.id, value: 'a', 'value:de': 'A-de' }],
    }), 'Successfully updated the custom field!');
    expect(data.options.map((o: any) => [o.id, o.value, o.order])).toEqual([[b.id, 'B', 0], [expect.any(Number), 'd', 1], [a.id, 'a', 2]]);
    const newOption = data.options.find((o: any) => o.value === 'd');
    expect([a.id, b.id, c.id]).not.toContain(newOption.id);
    // a's translations were replaced by the ones given; c's went with it.
    expect(data.options.find((o: any) => o.id === a.id).translations).toEqual([{ option_id: a.id, value: 'A-de', locale: 'de' }]);
    expect(await Translation.count({ where: { record_type: 'customfieldoption', record_id: c.id } })).toBe(0);
    expect(await CustomFieldOption.findByPk(c.id)).toBeNull();
    // The value that named the deleted option is gone.
    expect(await CustomFieldValue.count({ where: { field_id: created.id, owner_id: org.id } })).toBe(0);
  });

  it('keeps the options when none are given', async () => {
    const created = await create({ type: 7, options: [{ value: 'a' }] });
    const data = expectSuccess(await api.put(`${BASE}/${created.id}`, { name: 'x' }), 'Successfully updated the custom field!');
    expect(data.options).toEqual(created.options);
  });

  it('refuses the option of another field', async () => {
    const created = await create({ type: 5, options: [{ value: 'a' }] });
    const other = await create({ type: 5, options: [{ value: 'b' }] });
    expectError(await api.put(`${BASE}/${created.id}`, { options: [{ value: 'x' }, { id: other.options[0].id, value: 'b' }] }), 422, 'The selected options.1.id is invalid.');
    expect(expectSuccess(await api.get(`${BASE}/${created.id}`)).options).toEqual(created.options);
  });

  it('removes the options when the type is no longer an option type and the request removes them', async () => {
    const created = await create({ type: 5, options: [{ value: 'a' }] });
    expectError(await api.put(`${BASE}/${created.id}`, { type: 8 }), 422,
      'The type of a custom field with options can only change to another type with options; remove its options first.');
    const data = expectSuccess(await api.put(`${BASE}/${created.id}`, { type: 8, options: '' }), 'Successfully updated the custom field!');
    expect(data.options).toEqual([]);
    expect(await CustomFieldOption.count({ where: { field_id: created.id } })).toBe(0);
  });

  it('replaces the brand list; an empty value clears it', async () => {
    const brand = await Brand.create({ name: unique('brand') });
    const created = await create({ brand: [1] });
    expectSuccess(await api.put(`${BASE}/${created.id}`, { brand: [brand.id] }), 'Successfully updated the custom field!');
    expect((await CustomFieldBrand.findAll({ where: { field_id: created.id } })).map((b) => b.brand_id)).toEqual([brand.id]);
    expectSuccess(await api.put(`${BASE}/${created.id}`, { brand: '' }), 'Successfully updated the custom field!');
    expect(await CustomFieldBrand.count({ where: { field_id: created.id } })).toBe(0);
  });

  it('sets and clears the dependency, and refuses cycles', async () => {
    const a = await create({ type: 5, options: [{ value: 'x' }] });
    const b = await create({});
    expectSuccess(await api.put(`${BASE}/${b.id}`, { depends_on_field_id: a.id, depends_on_option_id: a.options[0].id }), 'Successfully updated the custom field!');
    expect(await CustomField.findByPk(b.id)).toMatchObject({ depends_on_field_id: a.id, depends_on_option_id: a.options[0].id });
    expectError(await api.put(`${BASE}/${a.id}`, { depends_on_field_id: b.id }), 422, 'The depends on field id may not name a field that depends on this one.');
    expectError(await api.put(`${BASE}/${a.id}`, { depends_on_field_id: a.id }), 422, 'The selected depends on field id is invalid.');
    expectSuccess(await api.put(`${BASE}/${b.id}`, { depends_on_field_id: 0 }), 'Successfully updated the custom field!');
    expect(await CustomField.findByPk(b.id)).toMatchObject({ depends_on_field_id: null, depends_on_option_id: null });
  });

  it('deletes the de translation when an update carries only name:fr', async () => {
    const created = await create({ name: 'Sector', 'name:de': 'Branche' });
    const data = expectSuccess(await api.put(`${BASE}/${created.id}`, { 'name:fr': 'Secteur' }), 'Successfully updated the custom field!');
    expect(data.name).toBe('Sector');
    expect(data.translations).toEqual([{ field_id: created.id, name: 'Secteur', description: null, locale: 'fr' }]);
    expect(expectSuccess(await api.get(`${BASE}/${created.id}`, { lang: 'fr' })).name).toBe('Secteur');
    expect(expectSuccess(await api.get(`${BASE}/${created.id}`, { lang: 'de' })).name).toBe('Sector');
  });

  it('404 before 422', async () => {
    expectNotFound(await api.put(`${BASE}/999999`, { type: 99 }), 'custom field');
  });

  it.each([
    [{ type: 11 }, 'The selected type is invalid.'],
    [{ name: '' }, 'The name field is required.'],
    [{ locked: 'x' }, 'The locked field must be true or false.'],
    [{ brand: [999999] }, 'The selected brand.0 is invalid.'],
  ] as Array<[Record<string, unknown>, string]>)('422 %j', async (form, message) => {
    const created = await create({});
    expectError(await api.put(`${BASE}/${created.id}`, form), 422, message);
  });
});

describe('DELETE /api/user/organisationcustomfield/{id}', () => {
  it('deletes the field with its options, values, translations and brand links', async () => {
    const created = await create({ type: 5, brand: [1], 'name:fr': 'Champ', options: [{ value: 'a', 'value:fr': 'A' }] });
    const org = await Organisation.create({ brand_id: 1, name: unique('org') });
    await CustomFieldValue.create({ field_id: created.id, owner_id: org.id, value: String(created.options[0].id) });

    const res = await api.del(`${BASE}/${created.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'success', message: 'Successfully deleted the custom field!', data: null });
    expectNotFound(await api.get(`${BASE}/${created.id}`), 'custom field');
    expect(await CustomFieldOption.count({ where: { field_id: created.id } })).toBe(0);
    expect(await CustomFieldValue.count({ where: { field_id: created.id } })).toBe(0);
    expect(await CustomFieldBrand.count({ where: { field_id: created.id } })).toBe(0);
    expect(await Translation.count({ where: { record_type: 'customfield', record_id: created.id } })).toBe(0);
    expect(await Translation.count({ where: { record_type: 'customfieldoption', record_id: created.options[0].id } })).toBe(0);
  });

  it('404', async () => {
    expectNotFound(await api.del(`${BASE}/999999`), 'custom field');
  });
});

describe('GET /api/user/organisationcustomfield', () => {
  let brand: Brand;
  let ofBrand: any;
  let everyBrand: any;
  let ofDefault: any;
  beforeAll(async () => {
    brand = await Brand.create({ name: unique('brand') });
    ofBrand = await create({ brand: [brand.id] });
    everyBrand = await create({});
    ofDefault = await create({ brand: [1] });
  });

  it('lists the organisation fields only', async () => {
    const userField = await CustomField.create({ kind: 'user', name: unique('user field'), type: 8 });
    const res = await api.get(BASE, { limit: 1000 });
    const data = expectList(res);
    expect(res.body.count).toBe(await CustomField.count({ where: { kind: 'organisation' } }));
    const ids = data.map((f) => f.id);
    expect(ids).toEqual(expect.arrayContaining([ofBrand.id, everyBrand.id, ofDefault.id]));
    expect(ids).not.toContain(userField.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    for (const f of data) expect(Object.keys(f).sort()).toEqual([...FIELD_KEYS].sort());
  });

  it('filters by brand: the brand\'s fields and those of every brand', async () => {
    const ids = expectList(await api.get(BASE, { brand_id: brand.id, limit: 1000 })).map((f) => f.id);
    expect(ids).toEqual(expect.arrayContaining([ofBrand.id, everyBrand.id]));
    expect(ids).not.toContain(ofDefault.id);
    const ids1 = expectList(await api.get(BASE, { brand_id: 1, limit: 1000 })).map((f) => f.id);
    expect(ids1).toEqual(expect.arrayContaining([everyBrand.id, ofDefault.id]));
    expect(ids1).not.toContain(ofBrand.id);
    const none = await api.get(BASE, { brand_id: 999999 });
    expect(expectList(none)).toEqual([]);
    expect(none.body.count).toBe(0);
  });

  it('refuses a malformed brand id', async () => {
    expectError(await api.get(BASE, { brand_id: 'x' }), 422, 'The brand id must be an integer.');
  });

  it('pages: start is 1-based, count is the total', async () => {
    const all = expectList(await api.get(BASE, { limit: 1000 }));
    const res = await api.get(BASE, { start: 2, limit: 2 });
    expect(expectList(res).map((f) => f.id)).toEqual(all.slice(1, 3).map((f) => f.id));
    expect(res.body.count).toBe(all.length);
  });

  it('sorts by a sortable column, and refuses others', async () => {
    const data = expectList(await api.get(BASE, { order_column: 'name', order_direction: 'desc', limit: 1000 }));
    const names = data.map((f) => f.name);
    expect(names).toEqual([...names].sort((a, b) => b.localeCompare(a, 'en', { sensitivity: 'base' })));
    expectError(await api.get(BASE, { order_column: 'kind' }), 422, 'The selected order column is invalid.');
  });

  it('applies lang to names and options', async () => {
    const created = await create({ type: 5, 'name:es': 'Campo', options: [{ value: 'a', 'value:es': 'A-es' }] });
    const item = expectList(await api.get(BASE, { lang: 'es', limit: 1000 })).find((f) => f.id === created.id);
    expect(item.name).toBe('Campo');
    expect(item.options[0].value).toBe('A-es');
  });

  it('runs the same number of queries for limit=1 and limit=50', async () => {
    for (let i = 0; i < 12; i++) {
      await create({ type: 5, 'name:fr': `f${i}`, brand: [1], options: [{ value: 'a', 'value:fr': 'a' }, { value: 'b' }] });
    }
    const measure = async (query: Record<string, unknown>) => {
      const { result, queries } = await countWarm(async () => api.get(BASE, query));
      expectList(result);
      return { res: result, queries: queries.filter((q) => !/api_tokens|ip_bans/.test(q)) };
    };
    // Newest first: the first page starts with fields that have options (and translations) to load.
    for (const query of [{ order_direction: 'desc' }, { brand_id: 1, order_direction: 'desc' }, { lang: 'fr', order_direction: 'desc' }]) {
      await api.get(BASE, query);
      const one = await measure({ ...query, limit: 1 });
      const fifty = await measure({ ...query, limit: 50 });
      expect(one.res.body.data).toHaveLength(1);
      expect(fifty.res.body.data.length).toBeGreaterThanOrEqual(12);
      expect(fifty.queries.length).toBe(one.queries.length);
      // page, count, options, translations, option translations; the brand filter adds its two look-ups.
      expect(fifty.queries.length).toBeLessThanOrEqual(7);
    }
  });
});
