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
import { FEW_HOLDERS } from '../../src/db/searchGrams';
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
      expect(queries.some((q) => /custom_field_value_grams AS r WHERE r\.field_id = /.test(q))).toBe(true);
    }
  });

  it(`names the holders of every narrowing gram by id while they are ${FEW_HOLDERS} or fewer, and else reads the rarest gram's range`, async () => {
    const field = (await CustomField.create({ kind: 'user', name: unique('Many values'), type: 8 })).id;
    // 33,010 values of owners 1..33,010 (the list counts those that are people): 1,100 of them
    // `qzx<n>`; 1,500 `pqrxy`, 1,500 `qrxyz` and 10 `pqrxyz` (each gram of `pqrxyz` held by more
    // than FEW_HOLDERS, all three by 10).
    await execute(`INSERT INTO custom_field_values (field_id, owner_id, value, created_at, updated_at) SELECT ?, seq, CASE
        WHEN seq <= 1100 THEN CONCAT('qzx', seq) WHEN seq <= 30000 THEN CONCAT('val', seq) WHEN seq <= 31500 THEN 'pqrxy' WHEN seq <= 33000 THEN 'qrxyz' ELSE 'pqrxyz' END,
        1, 1 FROM seq_1_to_33010`, [field], undefined);
    // The values are of real people's ids: the field goes at the end (its values, grams and all), whatever happens.
    try {
      await holdersByForm(field);
    } finally {
      await CustomField.destroy({ where: { id: field } });
    }
  });
});

/** The customfield filter's count and first page of `field` against the LIKE alone, and the form its narrowing took. */
async function holdersByForm(field: number) {
  const oracle = async (term: string) => (await select<{ id: number }>(
    "SELECT id FROM users WHERE type = 'user' AND id IN (SELECT owner_id FROM custom_field_values WHERE field_id = ? AND value LIKE ?) ORDER BY id LIMIT 100",
    [field, likeContains(term)],
  )).map((r) => Number(r.id));
  const total = async (term: string) => Number((await select<{ n: number }>(
    "SELECT COUNT(*) AS n FROM users WHERE type = 'user' AND id IN (SELECT owner_id FROM custom_field_values WHERE field_id = ? AND value LIKE ?)", [field, likeContains(term)],
  ))[0].n);
  const cases: Array<[string, 'ids' | 'range' | 'none' | 'like']> = [['qzx', 'range'], ['qzx105', 'ids'], ['pqrxyz', 'ids'], ['zx10', 'ids'], ['qzxval', 'none'], ['val11', 'range'], ['val', 'like']];
  for (const [term, form] of cases) {
    const { result, queries } = await countQueries(async () => api.get('/api/user/user', { customfield: { [field]: term }, limit: 100 }));
    expect({ term, ids: expectList(result).map((u) => u.id), count: result.body.count }).toEqual({ term, ids: await oracle(term), count: await total(term) });
    const count = queries.find((q) => /COUNT\(\*\)[^;]*FROM `users`/.test(q))!;
    const read = /custom_field_value_grams AS r/.test(count) ? 'range' : /1 = 0/.test(count) ? 'none' : /\(id IN \(:b\d+\)\) AND/.test(count) ? 'ids' : 'like';
    // The holders: one statement where a gram narrows (none for `val`, which most values hold).
    const holders = queries.filter((q) => /SELECT r\.owner_id AS id FROM custom_field_value_grams AS r/.test(q));
    expect({ term, read, holders: holders.length }).toEqual({ term, read: form, holders: form === 'like' ? 0 : 1 });
  }
  // More than FEW_HOLDERS hold `qzx`: the range; the 11 people of `qzx105` (and `qzx1050`-`qzx1059`) by id.
  expect(await total('qzx')).toBeLessThanOrEqual(1100);
}

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
