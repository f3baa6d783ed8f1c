/**
 * The user list's part-of-a-value filters (`search`, `firstname`, `lastname`) narrowed by the
 * grams of migration 068: they find exactly the people the LIKE alone finds (the oracle below, run
 * on the database), whatever the characters (accents, expansions, `%` and `_`, emoji, two names
 * at their longest), kept by the triggers through creates, renames, raw statements and deletes; a
 * selective term reads its rarest gram's range, not every person.
 */
import { User } from '../../src/db/models';
import { execute, select } from '../../src/db/select';
import { countQueries } from '../../src/db/sequelize';
import { likeContains } from '../../src/db/sql';
import { narrowingGram } from '../../src/user/users/searchGrams';
import { useApi, unique } from '../helpers/app';
import { expectDeleted, expectList, expectSuccess } from '../helpers/envelope';

const api = useApi();
const tag = unique('g').toLowerCase();
let org: number;

const PEOPLE: Array<[string, string | null]> = [
  ['Straße', 'Müller'], ['Émile', 'Zola'], ['Bob', "O'Brien"], ['İlker', 'Şahin'], ['Ann 50%', 'under_score'],
  ['Zoë', null], ['Emoji 😀', 'Face'], ['x'.repeat(255), 'y'.repeat(255)], ['Jean-Luc', 'Picard'], ['Strasse', 'Muller'],
];
const ids: number[] = [];

const create = async (firstname: string, lastname: string | null, i: number) => expectSuccess(await api.post('/api/user/user', {
  firstname, ...(lastname === null ? {} : { lastname }), email: `p${i}.${tag}.strasse@grams-${tag}.example`, organisation_id: org,
}), 'Successfully created new user!').id as number;

/** The people of this file's organisation the filter's LIKE alone finds, by id. */
async function oracle(filter: 'search' | 'firstname' | 'lastname', term: string): Promise<number[]> {
  const condition = {
    search: "(CONCAT_WS(' ', firstname, lastname) LIKE :like OR email LIKE :lower)",
    firstname: 'firstname LIKE :like',
    lastname: 'lastname LIKE :like',
  }[filter];
  const rows = await select<{ id: number }>(`SELECT id FROM users WHERE type = 'user' AND organisation_id = :org AND ${condition} ORDER BY id`,
    { org, like: likeContains(term), lower: likeContains(term.toLowerCase()) });
  return rows.map((r) => Number(r.id));
}

/** The list's answer for the filter, within this file's organisation: ids and count. */
async function listed(filter: string, term: string) {
  const res = await api.get('/api/user/user', { [filter]: term, organisation_id: org, limit: 100 });
  return { ids: expectList(res).map((u) => u.id as number), count: res.body.count as number };
}

async function expectSameAsLike(filter: 'search' | 'firstname' | 'lastname', term: string): Promise<number[]> {
  const expected = await oracle(filter, term);
  const got = await listed(filter, term);
  expect({ term, ids: got.ids, count: got.count }).toEqual({ term, ids: expected, count: expected.length });
  return got.ids;
}

const gramsOfPerson = async (id: number) => Number((await select<{ n: number }>('SELECT COUNT(*) AS n FROM user_search_grams WHERE user_id = ?', [id]))[0].n);

beforeAll(async () => {
  org = expectSuccess(await api.post('/api/user/organisation', { name: `Grams ${tag}` }), 'Successfully created new organisation!').id;
  for (const [i, [first, last]] of PEOPLE.entries()) ids.push(await create(first, last, i));
});

describe('the user list narrowed by grams finds what the LIKE alone finds', () => {
  const SEARCHES = [
    'straße', 'STRASSE', 'aße', 'ass', 'emile', 'ÉMI', "o'b", 'İlk', 'ilk', 'şah', '50%', '0%', 'r_s', '_', 'Zoë', 'oë', '😀 F', 'ji 😀',
    'xxx', 'x y', 'xy', 'Luc P', 'n-L', tag, `grams-${tag}`, `p3.${tag}`, 'nomatchzzq', 'üll', 'ull', 'St',
  ];
  it.each(SEARCHES)('search=%s', async (term) => {
    await expectSameAsLike('search', term);
  });

  it.each([['firstname', 'raß'], ['firstname', 'RASS'], ['firstname', 'xxxxx'], ['lastname', 'rie'], ['lastname', 'er_'], ['lastname', 'yyy'], ['lastname', 'nomatchq']] as const)(
    '%s=%s', async (filter, term) => {
      await expectSameAsLike(filter, term);
    },
  );

  it('finds what it should (the oracle is not empty where a person matches)', async () => {
    expect((await listed('search', 'emile')).ids).toEqual([ids[1]]);
    expect((await listed('search', 'aße')).ids).toEqual([ids[0]]);
    expect((await listed('search', 'x y')).ids).toEqual([ids[7]]);
    expect((await listed('search', 'r_s')).ids).toEqual([ids[4]]);
    expect((await listed('search', '😀 F')).ids).toEqual([ids[6]]);
    // ü and u are one letter to the names' collation, character by character too.
    expect((await listed('lastname', 'üll')).ids).toEqual([ids[0], ids[9]]);
    expect((await listed('search', tag)).count).toBe(PEOPLE.length);
  });

  it('reads the rarest gram\'s people for a selective term, then the LIKE', async () => {
    const term = `p3.${tag}`;
    const { result, queries } = await countQueries(async () => api.get('/api/user/user', { search: term, limit: 5 }));
    expect(expectList(result).map((u) => u.id)).toEqual([ids[3]]);
    const count = queries.find((q) => /COUNT\(\*\)[^;]*FROM `users`/.test(q))!;
    expect(count).toMatch(/user_search_grams WHERE gram = /);
    // The statement as logged names its values (:b1); its plan, with the term's last gram (a part of
    // this file's tag, rare) and its LIKE patterns bound in their order.
    const values = [Array.from(term).slice(-3).join(''), likeContains(term), likeContains(term)];
    const plan = await select<{ table: string; type: string; key: string | null }>(
      `EXPLAIN ${count.replace(/^Executing \([^)]*\): /, '').replace(/:b\d+/g, '?')}`, values);
    expect(plan[0]).toMatchObject({ table: 'user_search_grams', type: 'ref', key: 'PRIMARY' });
    expect(plan.some((r) => r.type === 'ALL' || r.type === 'index')).toBe(false);
    // A term of two characters has no gram: the LIKE alone.
    const short = await countQueries(async () => api.get('/api/user/user', { search: 'zq', limit: 5 }));
    expect(short.queries.some((q) => /user_search_grams/.test(q))).toBe(false);
  });

  it('narrows by the rarest gram, and not at all where even it is held by a quarter of everyone', () => {
    const grams = (...n: number[]) => n.map((v, i) => ({ gram: `g${i}`, n: v }));
    expect(narrowingGram(grams(900, 12, 400), 1000)).toBe('g1');
    expect(narrowingGram(grams(900, 249), 1000)).toBe('g1');
    expect(narrowingGram(grams(900, 250, 600), 1000)).toBeUndefined();
    expect(narrowingGram(grams(NaN, 3), 1000)).toBe('g1');
    expect(narrowingGram(grams(NaN), 1000)).toBeUndefined();
  });
});

describe('the grams follow every write of a person', () => {
  it('a rename, also to a name the collation deems equal, and a new address', async () => {
    const id = await create('Renamed', 'Person', 100);
    expect((await listed('search', 'Renamed')).ids).toEqual([id]);
    expectSuccess(await api.put(`/api/user/user/${id}`, { firstname: 'Strasse' }), 'Successfully updated the user!');
    expect((await listed('search', 'Renamed')).ids).toEqual([]);
    expect((await listed('search', 'aße')).ids).toEqual([ids[0]]);
    // 'Straße' = 'Strasse' in the names' collation, but its grams differ: written again.
    expectSuccess(await api.put(`/api/user/user/${id}`, { firstname: 'Straße' }), 'Successfully updated the user!');
    expect((await listed('search', 'aße')).ids).toEqual([ids[0], id]);
    await expectSameAsLike('search', 'aße');
    expectSuccess(await api.put(`/api/user/user/${id}`, { email: `moved.${tag}@elsewhere-${tag}.example` }), 'Successfully updated the user!');
    expect((await listed('search', `moved.${tag}`)).ids).toEqual([id]);
    expect((await listed('search', 'p100.')).ids).toEqual([]);
    await expectSameAsLike('search', 'p100.');
  });

  it('raw statements, and a delete takes the grams away', async () => {
    const raw = await User.create({ type: 'user', brand_id: 1, firstname: 'Rawgram', lastname: 'Row', email: `raw.${tag}@grams-${tag}.example`, organisation_id: org, language_code: 'en', timezone: 'UTC' } as any);
    expect((await listed('search', 'Rawgram')).ids).toEqual([raw.id]);
    await execute('UPDATE users SET lastname = ? WHERE id = ?', ['Quixote', raw.id], undefined);
    expect((await listed('lastname', 'xot')).ids).toEqual([raw.id]);
    expect(await gramsOfPerson(raw.id)).toBeGreaterThan(0);
    expectDeleted(await api.del(`/api/user/user/${raw.id}`), 'user');
    expect(await gramsOfPerson(raw.id)).toBe(0);
    const gone = await create('Gone', 'Soon', 101);
    await execute('DELETE FROM users WHERE id = ?', [gone], undefined);
    expect(await gramsOfPerson(gone)).toBe(0);
  });

  it('the migration\'s fill writes what the triggers wrote', async () => {
    const [filled] = await select<{ n: number }>(
      `SELECT COUNT(*) AS n FROM (SELECT DISTINCT gram, user_id FROM (${(await import('../../migrations/068_user_search_grams')).gramRows('users', 'users')}) all_grams
        WHERE user_id IN (${ids.join(', ')})) d`,
    );
    const [kept] = await select<{ n: number }>(`SELECT COUNT(*) AS n FROM user_search_grams WHERE user_id IN (${ids.join(', ')})`);
    expect(Number(kept.n)).toBeGreaterThan(PEOPLE.length * 20);
    expect(Number(filled.n)).toBe(Number(kept.n));
  });
});
