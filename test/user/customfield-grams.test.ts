/**
 * A list's `customfield` filter of a text or textarea field ("contains") narrowed by the grams of
 * migration 070: it finds exactly the records the LIKE alone finds (the oracle below, run on the
 * database), for values of any length (over 64 characters a value holds one LONG_TEXT row, which
 * every look-up includes), kept by the triggers through creates, changes, raw statements, a
 * record's and a field's delete.
 */
import { CustomField, CustomFieldValue } from '../../src/db/models';
import { execute, select } from '../../src/db/select';
import { countQueries } from '../../src/db/sequelize';
import { likeContains } from '../../src/db/sql';
import { useApi, unique } from '../helpers/app';
import { expectDeleted, expectList, expectSuccess } from '../helpers/envelope';

const api = useApi();
const tag = unique('cfg').toLowerCase();
let brand: number;
let text: number;
let textarea: number;
const people: number[] = [];

const VALUES: Array<[string | null, string | null]> = [
  ['ORD-1004567', 'Short note'],
  ['ORD-1004568', `${'Lorem ipsum dolor sit amet. '.repeat(20)}needle in the middle, ${'and more text. '.repeat(20)}`],
  ['Straße 12', null],
  ['under_score', '50% off'],
  ['x'.repeat(64), 'y'.repeat(65)],
  [`${'z'.repeat(70)}needle`, 'Emoji 😀 end'],
  [null, 'ORD-1004567 in a note'],
];

const create = async (i: number, [t, ta]: [string | null, string | null]) => expectSuccess(await api.post('/api/user/user', {
  firstname: 'Field', lastname: `${i}`, email: `cf${i}.${tag}@cf-${tag}.example`, brand_id: brand,
  customfield: { ...(t === null ? {} : { [text]: t }), ...(ta === null ? {} : { [textarea]: ta }) },
}), 'Successfully created new user!').id as number;

/** This file's people whose value of `field` the LIKE alone matches. */
const oracle = async (field: number, term: string) => (await select<{ id: number }>(
  `SELECT id FROM users WHERE brand_id = :brand AND id IN (SELECT owner_id FROM custom_field_values WHERE field_id = :field AND value LIKE :like) ORDER BY id`,
  { brand, field, like: likeContains(term) },
)).map((r) => Number(r.id));

const listed = async (field: number, term: string) => {
  const res = await api.get('/api/user/user', { customfield: { [field]: term }, brand_id: brand, limit: 100 });
  return { ids: expectList(res).map((u) => u.id as number), count: res.body.count as number };
};

async function expectSameAsLike(field: number, term: string) {
  const expected = await oracle(field, term);
  expect({ term, ...(await listed(field, term)) }).toEqual({ term, ids: expected, count: expected.length });
}

const gramsOf = async (where: string, values: unknown[]) =>
  Number((await select<{ n: number }>(`SELECT COUNT(*) AS n FROM custom_field_value_grams WHERE ${where}`, values))[0].n);

beforeAll(async () => {
  brand = expectSuccess(await api.post('/api/core/brand', { name: unique('Field grams brand') }), 'Successfully created new brand!').id;
  text = (await CustomField.create({ kind: 'user', name: unique('Grams text'), type: 8 })).id;
  textarea = (await CustomField.create({ kind: 'user', name: unique('Grams textarea'), type: 9 })).id;
  for (const [i, v] of VALUES.entries()) people.push(await create(i, v));
  // Three hundred more values of each field, of owners that are no one's (no person lists them):
  // a rare gram is then under a tenth of the field's values, so the filter narrows by it.
  for (const field of [text, textarea]) {
    await execute(`INSERT INTO custom_field_values (field_id, owner_id, value, created_at, updated_at)
      SELECT ?, 4000000000 - seq, CONCAT('Filler ', seq), 0, 0 FROM seq_1_to_300`, [field], undefined);
  }
});

describe('the customfield filter narrowed by grams finds what the LIKE alone finds', () => {
  it.each(['1004567', '0045', 'ORD-10045', 'aße', 'STRASSE', 'r_s', '50%', 'xxx', 'zzz', 'needle', 'eedl', 'e in the mid', 'yyy', '😀 e', 'zz', 'nomatchq'])(
    'text and textarea contain %s', async (term) => {
      await expectSameAsLike(text, term);
      await expectSameAsLike(textarea, term);
    },
  );

  it('finds what it should: short values by their grams, long ones by their LIKE', async () => {
    expect((await listed(text, '1004567')).ids).toEqual([people[0]]);
    expect((await listed(text, 'needle')).ids).toEqual([people[5]]); // 76 characters: no grams of its own
    expect((await listed(textarea, 'needle')).ids).toEqual([people[1]]);
    expect((await listed(textarea, 'yyy')).ids).toEqual([people[4]]);
    expect((await listed(text, 'xxx')).ids).toEqual([people[4]]); // 64 characters: its grams
    expect(await gramsOf('field_id = ? AND owner_id = ? AND gram = ?', [text, people[5], 'long'])).toBe(1);
    expect(await gramsOf('field_id = ? AND owner_id = ?', [text, people[4]])).toBe(1); // 'xxx' once
  });

  it('reads the rarest gram\'s holders in the field for a selective term, long values included', async () => {
    for (const [field, term, found] of [[text, 'Straße 1', people[2]], [text, 'needle', people[5]], [textarea, 'needle', people[1]]] as const) {
      const { result, queries } = await countQueries(async () => api.get('/api/user/user', { customfield: { [field]: term }, brand_id: brand }));
      expect(expectList(result).map((u) => u.id)).toEqual([found]);
      expect(queries.some((q) => /custom_field_value_grams WHERE field_id = /.test(q))).toBe(true);
    }
  });
});

describe('the grams follow every write of a value', () => {
  it('a change through the API and by a statement, a record\'s delete and a field\'s', async () => {
    const id = await create(100, ['Before 111', null]);
    expect((await listed(text, 'fore 1')).ids).toEqual([id]);
    expectSuccess(await api.put(`/api/user/user/${id}`, { customfield: { [text]: 'After 222' } }), 'Successfully updated the user!');
    expect((await listed(text, 'fore 1')).ids).toEqual([]);
    expect((await listed(text, 'ter 2')).ids).toEqual([id]);
    // Made long by a statement: its grams leave for one LONG_TEXT row, and the LIKE still finds it.
    await execute('UPDATE custom_field_values SET value = ? WHERE field_id = ? AND owner_id = ?', [`${'w'.repeat(80)} After 333`, text, id], undefined);
    expect(await gramsOf('field_id = ? AND owner_id = ?', [text, id])).toBe(1);
    expect((await listed(text, 'ter 3')).ids).toEqual([id]);
    await expectSameAsLike(text, 'ter 3');
    expectDeleted(await api.del(`/api/user/user/${id}`), 'user');
    expect(await gramsOf('owner_id = ? AND field_id IN (?, ?)', [id, text, textarea])).toBe(0);

    const gone = (await CustomField.create({ kind: 'user', name: unique('Grams gone'), type: 8 })).id;
    await CustomFieldValue.bulkCreate(people.map((owner, i) => ({ field_id: gone, owner_id: owner, value: `Gone value ${i}` })));
    expect(await gramsOf('field_id = ?', [gone])).toBeGreaterThan(people.length);
    await execute('DELETE FROM custom_fields WHERE id = ?', [gone], undefined);
    expect(await gramsOf('field_id = ?', [gone])).toBe(0);
  });
});
