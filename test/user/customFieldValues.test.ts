import { Op, QueryTypes, type Transaction } from 'sequelize';
import { capture, explainOf } from '../../bench/capture';
import { Brand, CustomField, CustomFieldBrand, CustomFieldOption, CustomFieldValue, Organisation, User } from '../../src/db/models';
import { countQueries, sequelize } from '../../src/db/sequelize';
import { prepareDatabase } from '../../src/cli/setup';
import { parseListQuery } from '../../src/http/listQuery';
import { ValidationError } from '../../src/errors';
import {
  applyCustomFieldValues, customFieldFilter, deleteCustomFieldValues, loadCustomFieldValues, serializeCustomFieldValue,
} from '../../src/customfields/values';
import { closeCounters } from '../../src/redis/windowCounter';
import { unique } from '../helpers/app';

/**
 * The values service, called directly. Every field here belongs to a brand of this file's own, so
 * its required fields never apply to the users and organisations other test files create.
 */

let brand: Brand;
let otherBrand: Brand;

beforeAll(async () => {
  await prepareDatabase();
  brand = await Brand.create({ name: unique('values brand') });
  otherBrand = await Brand.create({ name: unique('other brand') });
});
afterAll(async () => {
  // The custom field writes bumped the configuration's cache version through the counters' Redis
  // connection: left open, it keeps a --runInBand run from exiting.
  closeCounters();
  await sequelize().close();
});

async function makeField(values: Partial<CustomField> & { type: number }, options: string[] = [], brands: number[] = [brand.id]) {
  const field = await CustomField.create({ kind: 'user', name: unique('field'), ...values });
  for (const b of brands) await CustomFieldBrand.create({ field_id: field.id, brand_id: b });
  const opts = [];
  for (const [i, value] of options.entries()) opts.push(await CustomFieldOption.create({ field_id: field.id, value, order: i }));
  return { field, options: opts };
}

const makeUser = (brandId = brand.id) => User.create({ type: 'user', brand_id: brandId, email: `${unique('u')}@example.com` });

/** Runs the service in a transaction that commits, like a request would. */
async function apply(ownerId: number, input: Record<string, unknown> | undefined, opts: { creating?: boolean; overwriteLocked?: boolean; brandId?: number; kind?: 'user' | 'organisation' } = {}) {
  await sequelize().transaction((transaction: Transaction) => applyCustomFieldValues(opts.kind ?? 'user', ownerId, input, {
    brandId: opts.brandId ?? brand.id, creating: opts.creating ?? false, overwriteLocked: opts.overwriteLocked ?? false, transaction,
  }));
}

/** The person's values (of user fields only: a ticket or organisation of the same id has values too). */
async function stored(ownerId: number): Promise<Record<number, string | null>> {
  const userFields = (await CustomField.findAll({ attributes: ['id'], where: { kind: 'user' } })).map((field) => field.id);
  const rows = await CustomFieldValue.findAll({ where: { owner_id: ownerId, field_id: userFields } });
  return Object.fromEntries(rows.map((r) => [r.field_id, r.value]));
}

async function expect422(work: Promise<unknown>, message: string) {
  const err = await work.then(() => null, (e) => e);
  expect(err).toBeInstanceOf(ValidationError);
  expect(err.message).toBe(message);
}

describe('applyCustomFieldValues: values by type', () => {
  let f: Record<string, { field: CustomField; options: CustomFieldOption[] }>;
  beforeAll(async () => {
    f = {
      boolean: await makeField({ type: 0 }),
      checkbox: await makeField({ type: 1 }),
      checklist: await makeField({ type: 2 }, ['a', 'b', 'c']),
      date: await makeField({ type: 3 }),
      multiple: await makeField({ type: 4 }, ['x', 'y']),
      options: await makeField({ type: 5 }, ['p', 'q']),
      password: await makeField({ type: 6 }),
      radio: await makeField({ type: 7 }, ['r', 's']),
      text: await makeField({ type: 8 }),
      textarea: await makeField({ type: 9 }),
    };
  });

  it('stores each type in its form', async () => {
    const user = await makeUser();
    await apply(user.id, {
      [f.boolean.field.id]: 'true',
      [f.checkbox.field.id]: '0',
      [f.checklist.field.id]: [String(f.checklist.options[2].id), String(f.checklist.options[0].id)],
      [f.date.field.id]: '1700000000',
      [f.multiple.field.id]: `${f.multiple.options[0].id},${f.multiple.options[1].id}`,
      [f.options.field.id]: String(f.options.options[1].id),
      [f.password.field.id]: ' s3cret ',
      [f.radio.field.id]: f.radio.options[0].id,
      [f.text.field.id]: '  hello  ',
      [f.textarea.field.id]: 'line 1\nline 2',
    }, { creating: true });
    expect(await stored(user.id)).toEqual({
      [f.boolean.field.id]: '1',
      [f.checkbox.field.id]: '0',
      [f.checklist.field.id]: `${f.checklist.options[2].id},${f.checklist.options[0].id}`,
      [f.date.field.id]: '1700000000',
      [f.multiple.field.id]: `${f.multiple.options[0].id},${f.multiple.options[1].id}`,
      [f.options.field.id]: String(f.options.options[1].id),
      [f.password.field.id]: ' s3cret ',
      [f.radio.field.id]: String(f.radio.options[0].id),
      [f.text.field.id]: 'hello',
      [f.textarea.field.id]: 'line 1\nline 2',
    });
  });

  it.each([
    ['boolean', () => 'yes', (id: number) => `The customfield.${id} field must be true or false.`],
    ['checkbox', () => '2', (id: number) => `The customfield.${id} field must be true or false.`],
    ['date', () => 'tomorrow', (id: number) => `The customfield.${id} must be a date as a UNIX timestamp (an integer).`],
    ['options', () => String(f.radio.options[0].id), (id: number) => `The customfield.${id} must be the id of one of the field's options.`],
    ['radio', () => 'r', (id: number) => `The customfield.${id} must be the id of one of the field's options.`],
    ['checklist', () => ['abc'], (id: number) => `The customfield.${id} must be a list of ids of the field's options.`],
    ['multiple', () => [String(f.multiple.options[0].id), String(f.options.options[0].id)], (id: number) => `The customfield.${id} must be a list of ids of the field's options: ${f.options.options[0].id} is not one of them.`],
    ['text', () => 'x'.repeat(256), (id: number) => `The customfield.${id} may not be greater than 255 characters.`],
    ['text', () => ({ a: 1 }), (id: number) => `The customfield.${id} must be a string.`],
    ['password', () => 'x'.repeat(256), (id: number) => `The customfield.${id} may not be greater than 255 characters.`],
    ['textarea', () => 'é'.repeat(40000), (id: number) => `The customfield.${id} may not be greater than 65535 bytes.`],
  ] as Array<[string, () => unknown, (id: number) => string]>)('refuses a bad %s value', async (name, value, message) => {
    const user = await makeUser();
    const id = f[name].field.id;
    await expect422(apply(user.id, { [id]: value() }, { creating: true }), message(id));
    expect(await stored(user.id)).toEqual({});
  });

  it('refuses unknown fields, fields of the other kind and fields of another brand', async () => {
    const user = await makeUser();
    const orgField = await CustomField.create({ kind: 'organisation', name: unique('org'), type: 8 });
    const elsewhere = await makeField({ type: 8 }, [], [otherBrand.id]);
    await expect422(apply(user.id, { 999999: 'x' }), 'The selected customfield.999999 is invalid.');
    await expect422(apply(user.id, { [orgField.id]: 'x' }), `The selected customfield.${orgField.id} is invalid.`);
    await expect422(apply(user.id, { [elsewhere.field.id]: 'x' }), `The selected customfield.${elsewhere.field.id} is invalid.`);
    await expect422(apply(user.id, { abc: 'x' }), 'The selected customfield.abc is invalid.');
    await expect422(apply(user.id, ['x'] as any), 'The customfield must be an array keyed by custom field id.');
    // A field with no brand list applies to every brand.
    const everywhere = await makeField({ type: 8 }, [], []);
    await apply(user.id, { [everywhere.field.id]: 'ok' });
    expect(await stored(user.id)).toEqual({ [everywhere.field.id]: 'ok' });
  });

  it('deletes a stored value when given an empty one, and leaves other fields alone', async () => {
    const user = await makeUser();
    await apply(user.id, { [f.text.field.id]: 'a', [f.checklist.field.id]: [f.checklist.options[0].id] }, { creating: true });
    await apply(user.id, { [f.text.field.id]: '' });
    expect(await stored(user.id)).toEqual({ [f.checklist.field.id]: String(f.checklist.options[0].id) });
    await apply(user.id, { [f.checklist.field.id]: [] });
    expect(await stored(user.id)).toEqual({});
  });

  it('updates a value in place (one row per field and owner)', async () => {
    const user = await makeUser();
    await apply(user.id, { [f.text.field.id]: 'one' }, { creating: true });
    const first = await CustomFieldValue.findOne({ where: { field_id: f.text.field.id, owner_id: user.id } });
    await apply(user.id, { [f.text.field.id]: 'two' });
    const rows = await CustomFieldValue.findAll({ where: { field_id: f.text.field.id, owner_id: user.id } });
    expect(rows.map((r) => [r.id, r.value])).toEqual([[first!.id, 'two']]);
  });
});

describe('applyCustomFieldValues: required and locked fields', () => {
  let requiredBrand: Brand;
  beforeAll(async () => {
    requiredBrand = await Brand.create({ name: unique('required brand') });
  });

  it('needs every required field of the brand on create', async () => {
    const { field } = await makeField({ type: 8, required: 1 }, [], [requiredBrand.id]);
    const elsewhere = await makeField({ type: 8, required: 1 }, [], [otherBrand.id]);
    const user = await makeUser(requiredBrand.id);
    await expect422(apply(user.id, undefined, { creating: true, brandId: requiredBrand.id }), `The customfield.${field.id} field is required.`);
    await expect422(apply(user.id, { [field.id]: '  ' }, { creating: true, brandId: requiredBrand.id }), `The customfield.${field.id} field is required.`);
    await apply(user.id, { [field.id]: 'given' }, { creating: true, brandId: requiredBrand.id });
    expect(await stored(user.id)).toEqual({ [field.id]: 'given' });
    // On update the required field may be left out, not emptied.
    await apply(user.id, {}, { brandId: requiredBrand.id });
    await expect422(apply(user.id, { [field.id]: '' }, { brandId: requiredBrand.id }), `The customfield.${field.id} field is required.`);
    expect(elsewhere.field.required).toBe(1);
    await CustomField.update({ required: 0 }, { where: { id: field.id } });
  });

  it('needs a required dependent field only when its parent holds the option', async () => {
    const brandOwn = await Brand.create({ name: unique('dep brand') });
    const parent = await makeField({ type: 5 }, ['yes', 'no'], [brandOwn.id]);
    const { field: child } = await makeField({ type: 8, required: 1, depends_on_field_id: parent.field.id, depends_on_option_id: parent.options[0].id }, [], [brandOwn.id]);
    const a = await makeUser(brandOwn.id);
    await apply(a.id, { [parent.field.id]: parent.options[1].id }, { creating: true, brandId: brandOwn.id });
    const b = await makeUser(brandOwn.id);
    await expect422(apply(b.id, { [parent.field.id]: parent.options[0].id }, { creating: true, brandId: brandOwn.id }), `The customfield.${child.id} field is required.`);
    await apply(b.id, { [parent.field.id]: parent.options[0].id, [child.id]: 'why' }, { creating: true, brandId: brandOwn.id });
    expect(await stored(b.id)).toEqual({ [parent.field.id]: String(parent.options[0].id), [child.id]: 'why' });
  });

  it('leaves a locked field with a value unchanged on update unless overwriteLocked', async () => {
    const { field } = await makeField({ type: 8, locked: 1 });
    const user = await makeUser();
    await apply(user.id, { [field.id]: 'first' }, { creating: true });
    await apply(user.id, { [field.id]: 'second' });
    expect(await stored(user.id)).toEqual({ [field.id]: 'first' });
    await apply(user.id, { [field.id]: '' });
    expect(await stored(user.id)).toEqual({ [field.id]: 'first' });
    await apply(user.id, { [field.id]: 'third' }, { overwriteLocked: true });
    expect(await stored(user.id)).toEqual({ [field.id]: 'third' });
    // A locked field without a value may be set.
    const other = await makeUser();
    await apply(other.id, { [field.id]: 'set later' });
    expect(await stored(other.id)).toEqual({ [field.id]: 'set later' });
  });

  it('rolls back with the transaction', async () => {
    const { field } = await makeField({ type: 8 });
    const user = await makeUser();
    const t = await sequelize().transaction();
    await applyCustomFieldValues('user', user.id, { [field.id]: 'x' }, { brandId: brand.id, creating: true, overwriteLocked: true, transaction: t });
    await t.rollback();
    expect(await stored(user.id)).toEqual({});
  });
});

describe('organisation values', () => {
  it('keeps organisation and user values apart', async () => {
    const orgField = await CustomField.create({ kind: 'organisation', name: unique('org'), type: 8 });
    const { field: userField } = await makeField({ type: 8 }, [], []);
    const org = await Organisation.create({ brand_id: brand.id, name: unique('org') });
    const user = await makeUser();
    // The same numeric owner id may be a user and an organisation: values belong to the field's kind.
    await CustomFieldValue.create({ field_id: userField.id, owner_id: org.id, value: 'user value' });
    await apply(org.id, { [orgField.id]: 'org value' }, { kind: 'organisation', creating: true });
    await apply(user.id, { [userField.id]: 'mine' });

    const orgValues = await loadCustomFieldValues([org.id], 'organisation');
    expect(orgValues.get(org.id)!.map((v) => serializeCustomFieldValue(v, 'organisation_id'))).toEqual([{
      id: expect.any(Number), field_id: orgField.id, organisation_id: org.id, value: 'org value',
      created_at: expect.any(Number), updated_at: expect.any(Number),
    }]);

    await sequelize().transaction((t) => deleteCustomFieldValues('organisation', org.id, t));
    expect(await CustomFieldValue.count({ where: { field_id: orgField.id, owner_id: org.id } })).toBe(0);
    expect(await CustomFieldValue.count({ where: { field_id: userField.id, owner_id: org.id } })).toBe(1);
  });
});

describe('loadCustomFieldValues', () => {
  it('loads the values of many owners in one query', async () => {
    const { field } = await makeField({ type: 8 });
    const users = await Promise.all([makeUser(), makeUser(), makeUser()]);
    for (const [i, u] of users.entries()) await apply(u.id, { [field.id]: `v${i}` }, { creating: true });
    const { result, queries } = await countQueries(() => loadCustomFieldValues(users.map((u) => u.id), 'user'));
    expect(queries).toHaveLength(1);
    expect(users.map((u) => result.get(u.id)!.map((v) => serializeCustomFieldValue(v, 'user_id')))).toEqual(users.map((u, i) => [{
      id: expect.any(Number), field_id: field.id, user_id: u.id, value: `v${i}`, created_at: expect.any(Number), updated_at: expect.any(Number),
    }]));
    const none = await countQueries(() => loadCustomFieldValues([], 'user'));
    expect(none.queries).toHaveLength(0);
    expect(none.result.size).toBe(0);
  });

  it("a page of 1,000 owners (the largest limit) reads the owners' values by their index", async () => {
    const { field } = await makeField({ type: 8 });
    const users = await Promise.all([makeUser(), makeUser()]);
    for (const [i, u] of users.entries()) await apply(u.id, { [field.id]: `w${i}` }, { creating: true });
    // 998 ids past every user's: from 1,000 values MariaDB would make the IN list a subquery,
    // and the statement (its values first, by a forced index) would read every value.
    const past = Number((await sequelize().query<{ m: number }>('SELECT MAX(id) AS m FROM users', { type: QueryTypes.SELECT }))[0].m);
    const ids = [...users.map((u) => u.id), ...Array.from({ length: 998 }, (_, i) => past + 1 + i)];
    const { result, statements } = await capture(() => loadCustomFieldValues(ids, 'user'));
    expect(users.map((u) => result.get(u.id)!.map((v) => v.value))).toEqual([['w0'], ['w1']]);
    expect(statements).toHaveLength(1);
    const plan = await sequelize().query<Record<string, unknown>>(explainOf(statements[0].sql), { replacements: statements[0].params, type: QueryTypes.SELECT });
    expect(plan.map((r) => ({ table: r.table, type: r.type, key: r.key }))[0]).toEqual({ table: 'v', type: 'range', key: 'custom_field_values_owner_id' });
  });
});

describe('deleteCustomFieldValues', () => {
  it('removes every value of the user', async () => {
    const { field } = await makeField({ type: 8 });
    const user = await makeUser();
    const other = await makeUser();
    await apply(user.id, { [field.id]: 'a' }, { creating: true });
    await apply(other.id, { [field.id]: 'b' }, { creating: true });
    await sequelize().transaction((t) => deleteCustomFieldValues('user', user.id, t));
    expect(await stored(user.id)).toEqual({});
    expect(await stored(other.id)).toEqual({ [field.id]: 'b' });
  });
});

describe('customFieldFilter', () => {
  const filter = customFieldFilter('user');
  const spec = { sortable: [], filters: { customfield: filter }, dates: false };

  /** The ids of the given users that match `customfield` (through the list query parser, as a list runs it). */
  async function matching(users: User[], customfield: unknown): Promise<number[]> {
    const q = await parseListQuery(spec, { customfield });
    if (!q.possible) return [];
    const rows = await User.findAll({ where: { [Op.and]: [q.where, { id: { [Op.in]: users.map((u) => u.id) } }] }, order: [['id', 'ASC']], replacements: q.replacements });
    return rows.map((r) => r.id);
  }

  let text: CustomField;
  let radio: { field: CustomField; options: CustomFieldOption[] };
  let checklist: { field: CustomField; options: CustomFieldOption[] };
  let flag: CustomField;
  let date: CustomField;
  let users: User[];
  beforeAll(async () => {
    text = (await makeField({ type: 8 })).field;
    radio = await makeField({ type: 7 }, ['a', 'b']);
    checklist = await makeField({ type: 2 }, ['x', 'y', 'z']);
    flag = (await makeField({ type: 1 })).field;
    date = (await makeField({ type: 3 })).field;
    users = [await makeUser(), await makeUser(), await makeUser()];
    await apply(users[0].id, {
      [text.id]: 'Hello 50% world', [radio.field.id]: radio.options[0].id, [checklist.field.id]: [checklist.options[0].id, checklist.options[2].id],
      [flag.id]: 1, [date.id]: 1700000000,
    }, { creating: true });
    await apply(users[1].id, {
      [text.id]: 'goodbye', [radio.field.id]: radio.options[1].id, [checklist.field.id]: [checklist.options[1].id], [flag.id]: 0,
    }, { creating: true });
  });

  it('Text: contains, wildcards taken literally', async () => {
    expect(await matching(users, { [text.id]: 'lo 50%' })).toEqual([users[0].id]);
    expect(await matching(users, { [text.id]: 'o' })).toEqual([users[0].id, users[1].id]);
    expect(await matching(users, { [text.id]: '%' })).toEqual([users[0].id]);
    expect(await matching(users, { [text.id]: '_' })).toEqual([]);
  });

  it('option types: the option id is among the stored ids', async () => {
    expect(await matching(users, { [radio.field.id]: radio.options[1].id })).toEqual([users[1].id]);
    expect(await matching(users, { [checklist.field.id]: String(checklist.options[2].id) })).toEqual([users[0].id]);
    expect(await matching(users, { [checklist.field.id]: String(checklist.options[1].id) })).toEqual([users[1].id]);
  });

  it('other types: equals; several fields: all must match', async () => {
    expect(await matching(users, { [flag.id]: 'true' })).toEqual([users[0].id]);
    expect(await matching(users, { [flag.id]: '0' })).toEqual([users[1].id]);
    expect(await matching(users, { [date.id]: '1700000000' })).toEqual([users[0].id]);
    expect(await matching(users, { [flag.id]: '1', [text.id]: 'goodbye' })).toEqual([]);
    expect(await matching(users, { [flag.id]: '0', [text.id]: 'goodbye' })).toEqual([users[1].id]);
    expect(await matching(users, { [flag.id]: '' })).toEqual(users.map((u) => u.id));
  });

  it('refuses ids that are not fields of the kind, and malformed values', async () => {
    const orgField = await CustomField.create({ kind: 'organisation', name: unique('org'), type: 8 });
    await expect422(matching(users, { 999999: 'x' }), 'The selected customfield.999999 is invalid.');
    await expect422(matching(users, { [orgField.id]: 'x' }), `The selected customfield.${orgField.id} is invalid.`);
    await expect422(matching(users, { abc: 'x' }), 'The selected customfield.abc is invalid.');
    await expect422(matching(users, 'x'), 'The customfield must be an array keyed by custom field id.');
    await expect422(matching(users, { [radio.field.id]: 'a' }), `The customfield.${radio.field.id} must be the id of one of the field's options.`);
    await expect422(matching(users, { [flag.id]: 'maybe' }), `The customfield.${flag.id} field must be true or false.`);
  });
});
