/**
 * A list's `customfield` filter of an option field (the option id is among the value's ids) read
 * from migration 071's index of each value's ids: it finds exactly the records `FIND_IN_SET` finds
 * over the values (the oracle below, run on the database), kept by the triggers through creates,
 * changes, raw statements, a record's and a field's delete; and an option's delete prunes the
 * values that named it, found by the same index.
 */
import { CustomField, CustomFieldValue } from '../../src/db/models';
import { execute, select } from '../../src/db/select';
import { countQueries } from '../../src/db/sequelize';
import { OPTIONS as OPTIONS_SOURCE } from '../../migrations/071_custom_field_value_options';
import { gramRows } from '../../migrations/068_user_search_grams';
import { useApi, unique } from '../helpers/app';
import { expectDeleted, expectError, expectList, expectSuccess } from '../helpers/envelope';
import { ticketContext, ticketFactories } from '../ticket/ticketSupport';

const api = useApi();
const tag = unique('cfo').toLowerCase();
let brand: number;
/** A checklist (several ids a value) and a radio field (one), with their option ids. */
let checklist: { id: number; options: number[] };
let radio: { id: number; options: number[] };
const people: number[] = [];

const field = async (type: number, n: number) => {
  const data = expectSuccess(await api.post('/api/user/customfield', {
    name: unique(`Options ${type}`), type, options: Array.from({ length: n }, (_, i) => ({ value: `Option ${i}` })),
  }), 'Successfully created new custom field!');
  return { id: data.id as number, options: data.options.map((o: { id: number }) => o.id) as number[] };
};

const create = async (i: number, values: Record<number, unknown>) => expectSuccess(await api.post('/api/user/user', {
  firstname: 'Option', lastname: `${i}`, email: `cfo${i}.${tag}@cfo-${tag}.example`, brand_id: brand, customfield: values,
}), 'Successfully created new user!').id as number;

/** This file's people whose value of `fieldId` names `option`, by FIND_IN_SET over the values. */
const oracle = async (fieldId: number, option: number) => (await select<{ id: number }>(
  `SELECT id FROM users WHERE brand_id = :brand AND id IN (SELECT owner_id FROM custom_field_values WHERE field_id = :field AND FIND_IN_SET(:option, value) > 0) ORDER BY id`,
  { brand, field: fieldId, option: String(option) },
)).map((r) => Number(r.id));

const listed = async (fieldId: number, option: number | string) => {
  const res = await api.get('/api/user/user', { customfield: { [fieldId]: option }, brand_id: brand, limit: 100 });
  return { ids: expectList(res).map((u) => u.id as number), count: res.body.count as number };
};

async function expectSameAsFindInSet(fieldId: number, option: number) {
  const expected = await oracle(fieldId, option);
  expect({ option, ...(await listed(fieldId, option)) }).toEqual({ option, ids: expected, count: expected.length });
}

const rowsOf = async (where: string, values: unknown[]) => (await select<{ field_id: number; option_id: number; owner_id: number }>(
  `SELECT field_id, option_id, owner_id FROM custom_field_value_options WHERE ${where} ORDER BY field_id, option_id, owner_id`, values,
)).map((r) => [Number(r.field_id), Number(r.option_id), Number(r.owner_id)]);

beforeAll(async () => {
  brand = expectSuccess(await api.post('/api/core/brand', { name: unique('Field options brand') }), 'Successfully created new brand!').id;
  checklist = await field(2, 6);
  radio = await field(7, 3);
  const c = checklist.options;
  const r = radio.options;
  const values: Array<Record<number, unknown>> = [
    { [checklist.id]: [c[0]], [radio.id]: r[0] },
    { [checklist.id]: [c[0], c[1], c[2]], [radio.id]: r[1] },
    { [checklist.id]: [c[2], c[0]] },
    { [checklist.id]: [c[1]], [radio.id]: r[1] },
    { [radio.id]: r[2] },
    {},
  ];
  for (const [i, v] of values.entries()) people.push(await create(i, v));
});

describe('the customfield filter of an option field finds what FIND_IN_SET finds', () => {
  it('for every option of a checklist and a radio field', async () => {
    for (const f of [checklist, radio]) for (const option of f.options) await expectSameAsFindInSet(f.id, option);
  });

  it('finds what it should, first, middle and last ids of a value alike', async () => {
    const [c0, c1, c2, c3] = checklist.options;
    expect((await listed(checklist.id, c0)).ids).toEqual([people[0], people[1], people[2]]);
    expect((await listed(checklist.id, c1)).ids).toEqual([people[1], people[3]]);
    expect((await listed(checklist.id, c2)).ids).toEqual([people[1], people[2]]);
    expect((await listed(checklist.id, c3))).toEqual({ ids: [], count: 0 });
    expect((await listed(radio.id, radio.options[1]))).toEqual({ ids: [people[1], people[3]], count: 2 });
  });

  it('reads the index range of (field, option), not every value of the field', async () => {
    const { result, queries } = await countQueries(async () => api.get('/api/user/user', { customfield: { [checklist.id]: checklist.options[1] }, brand_id: brand }));
    expect(expectList(result).map((u) => u.id)).toEqual([people[1], people[3]]);
    expect(queries.some((q) => /FIND_IN_SET/.test(q))).toBe(false);
    const lookup = queries.find((q) => /custom_field_value_options WHERE field_id = /.test(q));
    expect(lookup).toBeDefined();
    const plan = await select<{ table: string; type: string; key: string | null }>(
      'EXPLAIN SELECT owner_id FROM custom_field_value_options WHERE field_id = ? AND option_id IN (?)', [checklist.id, checklist.options[1]],
    );
    expect(plan).toEqual([expect.objectContaining({ table: 'custom_field_value_options', type: 'ref', key: 'PRIMARY' })]);
  });

  it('refuses an id that is not one of the field\'s options, and changes nothing', async () => {
    expectError(await api.get('/api/user/user', { customfield: { [checklist.id]: radio.options[0] } }), 422,
      `The customfield.${checklist.id} must be the id of one of the field's options.`);
    expectError(await api.get('/api/user/user', { customfield: { [radio.id]: 'x' } }), 422,
      `The customfield.${radio.id} must be the id of one of the field's options.`);
  });
});

describe('the ids follow every write of a value', () => {
  it('holds exactly the ids of each value as the API writes them', async () => {
    const values = await CustomFieldValue.findAll({ where: { field_id: [checklist.id, radio.id] } });
    const expected = values.flatMap((v) => (v.value ?? '').split(',').map((id) => [v.field_id, Number(id), v.owner_id]))
      .sort((a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2]);
    expect(await rowsOf('field_id IN (?, ?)', [checklist.id, radio.id])).toEqual(expected);
  });

  it('the migration\'s fill writes what the triggers wrote', async () => {
    const filled = await select<{ field_id: number; option_id: number; owner_id: number }>(
      `SELECT DISTINCT field_id, option_id, owner_id FROM (${gramRows(OPTIONS_SOURCE, 'custom_field_values', 'custom_field_values')}) ids
        WHERE field_id IN (?, ?) ORDER BY field_id, CAST(option_id AS UNSIGNED), owner_id`, [checklist.id, radio.id], // the cut is text: by number, as the table
    );
    expect(filled.map((r) => [Number(r.field_id), Number(r.option_id), Number(r.owner_id)])).toEqual(await rowsOf('field_id IN (?, ?)', [checklist.id, radio.id]));
  });

  it('a change through the API and by statements, a record\'s delete and a field\'s', async () => {
    const [c0, c1, , c3, c4] = checklist.options;
    const id = await create(100, { [checklist.id]: [c0, c1] });
    expect(await rowsOf('field_id = ? AND owner_id = ?', [checklist.id, id])).toEqual([[checklist.id, c0, id], [checklist.id, c1, id]]);
    expectSuccess(await api.put(`/api/user/user/${id}`, { customfield: { [checklist.id]: [c3, c4] } }), 'Successfully updated the user!');
    expect(await rowsOf('field_id = ? AND owner_id = ?', [checklist.id, id])).toEqual([[checklist.id, c3, id], [checklist.id, c4, id]]);
    expect((await listed(checklist.id, c3)).ids).toContain(id);
    expect((await listed(checklist.id, c0)).ids).not.toContain(id);

    // Statements: a value that is not a list of ids as the API writes them holds none, and
    // FIND_IN_SET of an option id does not match it either.
    for (const raw of ['not ids', `0${c3}`, `${c3},`, ` ${c3}`, `${c3},x`]) {
      await execute('UPDATE custom_field_values SET value = ? WHERE field_id = ? AND owner_id = ?', [raw, checklist.id, id], undefined);
      expect({ raw, rows: await rowsOf('field_id = ? AND owner_id = ?', [checklist.id, id]) }).toEqual({ raw, rows: [] });
      if (raw !== `${c3},` && raw !== `${c3},x`) await expectSameAsFindInSet(checklist.id, c3);
    }
    // A repeated id is one row; a value moved to another record moves its ids.
    await execute('UPDATE custom_field_values SET value = ? WHERE field_id = ? AND owner_id = ?', [`${c4},${c4},${c0}`, checklist.id, id], undefined);
    expect(await rowsOf('field_id = ? AND owner_id = ?', [checklist.id, id])).toEqual([[checklist.id, c0, id], [checklist.id, c4, id]]);
    await execute('UPDATE custom_field_values SET owner_id = ? WHERE field_id = ? AND owner_id = ?', [4000000000, checklist.id, id], undefined);
    expect(await rowsOf('field_id = ? AND owner_id IN (?, ?)', [checklist.id, id, 4000000000]))
      .toEqual([[checklist.id, c0, 4000000000], [checklist.id, c4, 4000000000]]);
    await execute('UPDATE custom_field_values SET owner_id = ? WHERE field_id = ? AND owner_id = ?', [id, checklist.id, 4000000000], undefined);
    expectDeleted(await api.del(`/api/user/user/${id}`), 'user');
    // This file's fields' ids (a ticket or organisation of the same id holds ids of its own fields).
    expect(await rowsOf('field_id IN (?, ?) AND owner_id = ?', [checklist.id, radio.id, id])).toEqual([]);

    const gone = await field(4, 2);
    await CustomFieldValue.bulkCreate(people.map((owner, i) => ({ field_id: gone.id, owner_id: owner, value: String(gone.options[i % 2]) })));
    expect((await rowsOf('field_id = ?', [gone.id])).length).toBe(people.length);
    await execute('DELETE FROM custom_fields WHERE id = ?', [gone.id], undefined);
    expect(await rowsOf('field_id = ?', [gone.id])).toEqual([]);
  });
});

describe('an option\'s delete prunes the values that named it, found by the index', () => {
  it('every holder, over several chunks, keeps its other ids; one left with none loses its value', async () => {
    const f = await field(4, 3);
    const [keep, drop, other] = f.options;
    // 1,203 values (more than two chunks of 500): 1,200 of owners no one lists, three of people.
    await execute(`INSERT INTO custom_field_values (field_id, owner_id, value, created_at, updated_at)
      SELECT ?, 4000000000 - seq, IF(seq MOD 2 = 0, CONCAT(?, ',', ?), ?), 0, 0 FROM seq_1_to_1200`, [f.id, keep, drop, String(drop)], undefined);
    const alone = await create(200, { [f.id]: [drop] });
    const both = await create(201, { [f.id]: [drop, other] });
    const neither = await create(202, { [f.id]: [other] });
    const before = await CustomFieldValue.findOne({ where: { field_id: f.id, owner_id: neither } });

    const { queries } = await countQueries(async () => expectSuccess(await api.put(`/api/user/customfield/${f.id}`, {
      options: [{ id: keep, value: 'Option 0' }, { id: other, value: 'Option 2' }],
    }), 'Successfully updated the custom field!'));
    expect(queries.some((q) => /FIND_IN_SET/.test(q))).toBe(false);

    expect(Number((await select<{ n: number }>('SELECT COUNT(*) AS n FROM custom_field_values WHERE field_id = ? AND FIND_IN_SET(?, value) > 0', [f.id, String(drop)]))[0].n)).toBe(0);
    expect(await rowsOf('field_id = ? AND option_id = ?', [f.id, drop])).toEqual([]);
    expect(await CustomFieldValue.count({ where: { field_id: f.id, value: String(keep) } })).toBe(600);
    expect(await CustomFieldValue.count({ where: { field_id: f.id, owner_id: alone } })).toBe(0);
    expect((await CustomFieldValue.findOne({ where: { field_id: f.id, owner_id: both } }))!.value).toBe(String(other));
    // A value that named none of the deleted options is not written.
    const after = await CustomFieldValue.findOne({ where: { field_id: f.id, owner_id: neither } });
    expect([after!.value, after!.updated_at]).toEqual([before!.value, before!.updated_at]);
    expect((await listed(f.id, other)).ids).toEqual([both, neither]);
    await execute('DELETE FROM custom_field_values WHERE field_id = ? AND owner_id > ?', [f.id, 3000000000], undefined);
    await CustomField.destroy({ where: { id: f.id } });
  });
});

describe('a deleted person\'s tickets take their custom field values with them', () => {
  it('the values, their option ids and their grams', async () => {
    // Tickets as the ticket tests make them: the installed brand's person, department and statuses.
    const ctx = await ticketContext();
    const f = ticketFactories(api, () => ctx);
    const product = expectSuccess(await api.post('/api/ticket/customfield', {
      name: unique('Ticket product'), type: 5, options: [{ value: 'Widget' }, { value: 'Gadget' }],
    }), 'Successfully created new custom field!');
    const reference = expectSuccess(await api.post('/api/ticket/customfield', { name: unique('Ticket reference'), type: 8 }), 'Successfully created new custom field!');
    const person = (await f.user()).id;
    const tickets: number[] = [];
    // A ticket field's response leaves its options out (the spec): they are listed on their own.
    const options = expectList(await api.get(`/api/ticket/customfield/${product.id}/option`));
    for (const [i, option] of options.entries()) {
      tickets.push((await f.ticket({ user: person, customfield: { [product.id]: option.id, [reference.id]: `ORD-${tag}-${i}` } })).id);
    }
    const left = async () => Promise.all([
      CustomFieldValue.count({ where: { owner_id: tickets, field_id: [product.id, reference.id] } }),
      rowsOf('field_id = ? AND owner_id IN (?)', [product.id, tickets]).then((rows) => rows.length),
      select<{ n: number }>('SELECT COUNT(*) AS n FROM custom_field_value_grams WHERE field_id = ? AND owner_id IN (?)', [reference.id, tickets]).then(([r]) => Number(r.n)),
    ]);
    const [values, ids, grams] = await left();
    expect([values, ids, grams > 0]).toEqual([4, 2, true]);
    expectDeleted(await api.del(`/api/user/user/${person}`), 'user');
    expect(await left()).toEqual([0, 0, 0]);
  });
});
