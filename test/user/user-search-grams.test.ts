/**
 * The part-of-a-value filters narrowed by grams: the user list's `search`, `firstname` and
 * `lastname` (migration 068), the organisation list's `search` and the user list's
 * `organisation_name` (069). They find exactly what the LIKE alone finds (the oracles below, run
 * on the database), whatever the characters (accents, expansions, `%` and `_`, emoji, two names
 * at their longest), kept by the triggers through creates, renames, raw statements and deletes; a
 * selective term reads its rarest gram's range, not every record.
 */
import { PEOPLE as PEOPLE_SOURCE, gramRows } from '../../migrations/068_user_search_grams';
import { User } from '../../src/db/models';
import { execute, select } from '../../src/db/select';
import { countQueries } from '../../src/db/sequelize';
import { likeContains } from '../../src/db/sql';
import { narrowingGrams } from '../../src/db/searchGrams';
import { ORGANISATIONS as ORGANISATION_SOURCE } from '../../migrations/069_organisation_search_grams';
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
    // The rarest gram's holders that hold the others too, read by the grams' key; few: the count names them by id.
    const holders = queries.find((q) => /FROM user_search_grams AS r WHERE/.test(q))!;
    expect(holders).toMatch(/^[^;]*FROM user_search_grams AS r WHERE r\.gram = :b\d+( AND EXISTS \(SELECT 1 FROM user_search_grams AS o WHERE o\.gram = :b\d+ AND o\.user_id = r\.user_id\))* LIMIT :b\d+$/);
    const count = queries.find((q) => /COUNT\(\*\)[^;]*FROM `users`/.test(q))!;
    expect(count).not.toMatch(/user_search_grams/);
    expect(count).toMatch(/\(id IN \(:b\d+\)\) AND/);
    // A term of two characters has no gram: the LIKE alone.
    const short = await countQueries(async () => api.get('/api/user/user', { search: 'zq', limit: 5 }));
    expect(short.queries.some((q) => /user_search_grams/.test(q))).toBe(false);
  });

  it('narrows by the grams under the index\'s share of all records, the rarest first; not at all where none is', () => {
    const grams = (...n: number[]) => n.map((v, i) => ({ gram: `g${i}`, n: v }));
    expect(narrowingGrams(grams(900, 12, 40), 1000, 1 / 4)).toEqual(['g1', 'g2']);
    expect(narrowingGrams(grams(900, 12, 400), 1000, 1 / 4)).toEqual(['g1']);
    expect(narrowingGrams(grams(900, 249), 1000, 1 / 4)).toEqual(['g1']);
    expect(narrowingGrams(grams(900, 250, 600), 1000, 1 / 4)).toEqual([]);
    expect(narrowingGrams(grams(90, 99), 1000, 1 / 10)).toEqual(['g0', 'g1']);
    expect(narrowingGrams(grams(900, 100), 1000, 1 / 10)).toEqual([]);
    expect(narrowingGrams(grams(NaN, 3), 1000, 1 / 4)).toEqual(['g1']);
    expect(narrowingGrams(grams(NaN), 1000, 1 / 4)).toEqual([]);
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
      `SELECT COUNT(*) AS n FROM (SELECT DISTINCT gram, user_id FROM (${gramRows(PEOPLE_SOURCE, 'users', 'users')}) all_grams
        WHERE user_id IN (${ids.join(', ')})) d`,
    );
    const [kept] = await select<{ n: number }>(`SELECT COUNT(*) AS n FROM user_search_grams WHERE user_id IN (${ids.join(', ')})`);
    expect(Number(kept.n)).toBeGreaterThan(PEOPLE.length * 20);
    expect(Number(filled.n)).toBe(Number(kept.n));
  });
});

describe('organisations by a part of their name', () => {
  const NAMES = ['Straße GmbH', 'Émile & Fils', "O'Brien 50% Ltd", 'under_score plc', 'Zoë 😀 Co', 'Strasse AG', 'z'.repeat(255)];
  let brand: number;
  const orgs: number[] = [];
  const members: number[] = [];

  /** The organisations of this block's brand whose name the LIKE alone matches. */
  const orgOracle = async (term: string) => (await select<{ id: number }>(
    'SELECT id FROM organisations WHERE brand_id = :brand AND name LIKE :like ORDER BY id', { brand, like: likeContains(term) },
  )).map((r) => Number(r.id));

  beforeAll(async () => {
    brand = expectSuccess(await api.post('/api/core/brand', { name: unique('Grams brand') }), 'Successfully created new brand!').id;
    // Forty more, none matching a term below: a rare gram is then under a tenth of the
    // organisations even where this file runs first (the narrowing is checked below).
    await execute(`INSERT INTO organisations (brand_id, name, created_at, updated_at) SELECT ?, CONCAT('Filler ', ?, ' ', seq), 0, 0 FROM seq_1_to_40`, [brand, tag], undefined);
    for (const [i, name] of NAMES.entries()) {
      const o = expectSuccess(await api.post('/api/user/organisation', { name, brand_id: brand }), 'Successfully created new organisation!').id as number;
      orgs.push(o);
      members.push(expectSuccess(await api.post('/api/user/user', {
        firstname: 'Member', lastname: `${i}`, email: `m${i}.${tag}@orgs-${tag}.example`, brand_id: brand, organisation_id: o,
      }), 'Successfully created new user!').id);
    }
  });

  it.each(['aße', 'STRASSE', 'emile', '& F', "o'b", '50%', 'r_s', 'oë 😀', 'zzz', 'GmbH', 'St', 'nomatchq'])('search=%s, and the people whose organisation_name it is', async (term) => {
    const expected = await orgOracle(term);
    const res = await api.get('/api/user/organisation', { search: term, brand_id: brand, limit: 100 });
    expect({ term, ids: expectList(res).map((o) => o.id), count: res.body.count }).toEqual({ term, ids: expected, count: expected.length });
    const people = await api.get('/api/user/user', { organisation_name: term, brand_id: brand, limit: 100 });
    const expectedPeople = members.filter((_, i) => expected.includes(orgs[i]));
    expect({ term, ids: expectList(people).map((u) => u.id) }).toEqual({ term, ids: expectedPeople });
  });

  it('finds what it should, follows a rename and a delete, and reads a gram\'s range', async () => {
    expect((await orgOracle('aße'))).toEqual([orgs[0]]);
    expect(expectList(await api.get('/api/user/organisation', { search: 'r_s', brand_id: brand })).map((o) => o.id)).toEqual([orgs[3]]);
    // Renamed to a name the collation deems equal to the old one: its grams are written again.
    expectSuccess(await api.put(`/api/user/organisation/${orgs[5]}`, { name: 'Straße AG' }), 'Successfully updated the organisation!');
    expect(expectList(await api.get('/api/user/organisation', { search: 'aße', brand_id: brand })).map((o) => o.id)).toEqual([orgs[0], orgs[5]]);
    const { result, queries } = await countQueries(async () => api.get('/api/user/organisation', { search: 'Émile & F', brand_id: brand }));
    expect(expectList(result).map((o) => o.id)).toEqual([orgs[1]]);
    expect(queries.some((q) => /organisation_search_grams AS r WHERE r\.gram = /.test(q))).toBe(true);
    const gramsOf = async (id: number) => Number((await select<{ n: number }>('SELECT COUNT(*) AS n FROM organisation_search_grams WHERE organisation_id = ?', [id]))[0].n);
    expect(await gramsOf(orgs[6])).toBe(1); // 255 z's: one distinct gram
    expectDeleted(await api.del(`/api/user/organisation/${orgs[6]}`), 'organisation');
    expect(await gramsOf(orgs[6])).toBe(0);
    const [filled] = await select<{ n: number }>(`SELECT COUNT(*) AS n FROM (SELECT DISTINCT gram, organisation_id FROM (${gramRows(ORGANISATION_SOURCE, 'organisations', 'organisations')}) g
      WHERE organisation_id IN (${orgs.join(', ')})) d`);
    const [kept] = await select<{ n: number }>(`SELECT COUNT(*) AS n FROM organisation_search_grams WHERE organisation_id IN (${orgs.join(', ')})`);
    expect(Number(kept.n)).toBeGreaterThan(30);
    expect(Number(filled.n)).toBe(Number(kept.n));
  });
});
