/**
 * The user, operator and organisation lists read their `count` from migration 056's counters
 * (src/db/recordCounts.ts) when nothing narrows them but the brand and, of people, one of
 * `active`, `email_verified`, `country` and `language_code` (migration 066): exact whatever
 * writes the records (the API, a statement, a transaction rolled back, parallel creates), with no
 * COUNT over the records; any other filter counts its matches.
 */
import { Group, Organisation, User } from '../../src/db/models';
import { execute, select } from '../../src/db/select';
import { sequelize } from '../../src/db/sequelize';
import { useApi, unique, newEmail } from '../helpers/app';
import { expectDeleted, expectList, expectSuccess } from '../helpers/envelope';
import { measureList } from '../helpers/queries';

const api = useApi();

/** The records that match, COUNTed. */
const counted = async (sql: string, values: Record<string, unknown> = {}) => Number((await select<{ n: number }>(`SELECT COUNT(*) AS n FROM ${sql}`, values))[0].n);

/** A list's count and the statements it ran (a page of one: the count is what is checked). */
async function listed(path: string, query: Record<string, unknown> = {}) {
  const { res, queries } = await measureList(api, path, { limit: 1, ...query });
  expectList(res);
  return { count: res.body.count as number, queries };
}

/** A COUNT over the table (the statement the counters replace). */
const countsRecords = (queries: string[], table: string) => queries.some((q) => new RegExp(`COUNT\\(\\*\\)[^;]*FROM \`${table}\``).test(q));

const createUser = async (form: Record<string, unknown> = {}) =>
  expectSuccess(await api.post('/api/user/user', { firstname: 'Counted', lastname: unique('Q'), email: newEmail('counted'), ...form }), 'Successfully created new user!');
const brand = async () => expectSuccess(await api.post('/api/core/brand', { name: unique('Brand') }), 'Successfully created new brand!').id as number;

describe('list counts from the record counters', () => {
  it('counts users, of all brands and of one, exactly as they are created, re-branded and deleted', async () => {
    const [b1, b2] = [await brand(), await brand()];
    const users = [];
    for (let i = 0; i < 3; i++) users.push(await createUser({ brand_id: b1 }));
    users.push(await createUser({ brand_id: b2 }));
    // Re-branded, deleted through the API; created and deleted by statements of their own too.
    expectSuccess(await api.put(`/api/user/user/${users[0].id}`, { brand_id: b2 }), 'Successfully updated the user!');
    expectDeleted(await api.del(`/api/user/user/${users[1].id}`), 'user');
    const raw = await User.create({ type: 'user', brand_id: b2, firstname: 'Raw', lastname: 'Row', email: newEmail('raw'), language_code: 'en', timezone: 'UTC' } as any);
    const gone = await User.create({ type: 'user', brand_id: b2, firstname: 'Gone', lastname: 'Row', email: newEmail('gone'), language_code: 'en', timezone: 'UTC' } as any);
    await gone.destroy();
    // A transaction rolled back leaves no count behind.
    const undone = new Error('undone');
    await expect(sequelize().transaction(async (transaction) => {
      await User.create({ type: 'user', brand_id: b1, firstname: 'Undone', lastname: 'Row', email: newEmail('undone'), language_code: 'en', timezone: 'UTC' } as any, { transaction });
      throw undone;
    })).rejects.toBe(undone);

    const all = await listed('/api/user/user');
    expect(all.count).toBe(await counted("users WHERE type = 'user'"));
    expect(countsRecords(all.queries, 'users')).toBe(false);
    expect(all.queries.some((q) => /record_counts/.test(q))).toBe(true);
    for (const [b, expected] of [[b1, 1], [b2, 3]] as const) {
      const one = await listed('/api/user/user', { brand_id: b });
      expect(one.count).toBe(expected);
      expect(one.count).toBe(await counted("users WHERE type = 'user' AND brand_id = :b", { b }));
      expect(countsRecords(one.queries, 'users')).toBe(false);
    }
    expect(raw.id).toBeGreaterThan(0);
  });

  it('counts users by active, email_verified, country and language_code, of all brands and of one, as they change (migration 066)', async () => {
    const b = await brand();
    const made = [
      await createUser({ brand_id: b, country: 'FR' }),
      await createUser({ brand_id: b, active: 0, language_code: 'fr' }),
      await createUser({ brand_id: b, email_verified: 1, password: 'a long enough secret 1' }),
      await createUser({ active: 0, email_verified: 1, password: 'a long enough secret 2' }),
    ];
    /** Each flag's two values, a country and a language, of all brands and of `b`, from the counters and as COUNTed. */
    const expectFlags = async () => {
      for (const [flag, values] of [['active', [0, 1]], ['email_verified', [0, 1]], ['country', ['FR', 'NZ']], ['language_code', ['en', 'fr']]] as const) {
        for (const v of values) {
          const all = await listed('/api/user/user', { [flag]: v });
          expect(countsRecords(all.queries, 'users')).toBe(false);
          expect(all.count).toBe(await counted(`users WHERE type = 'user' AND ${flag} = :v`, { v }));
          const one = await listed('/api/user/user', { brand_id: b, [flag]: v });
          expect(countsRecords(one.queries, 'users')).toBe(false);
          expect(one.count).toBe(await counted(`users WHERE type = 'user' AND brand_id = :b AND ${flag} = :v`, { b, v }));
        }
      }
    };
    await expectFlags();
    expect((await listed('/api/user/user', { brand_id: b, active: 0 })).count).toBe(1);
    expect((await listed('/api/user/user', { brand_id: b, email_verified: 1 })).count).toBe(1);
    // A flag changed through the API and by a statement of its own; a user moved to another brand; one deleted.
    expectSuccess(await api.put(`/api/user/user/${made[0].id}`, { active: 0, email_verified: 1, password: 'a long enough secret 3', country: 'NZ' }), 'Successfully updated the user!');
    await execute("UPDATE users SET active = 1, language_code = 'en' WHERE id = :id", { id: made[1].id }, undefined);
    expectSuccess(await api.put(`/api/user/user/${made[3].id}`, { brand_id: b }), 'Successfully updated the user!');
    expectDeleted(await api.del(`/api/user/user/${made[2].id}`), 'user');
    await expectFlags();
    expect((await listed('/api/user/user', { brand_id: b, active: 0 })).count).toBe(2);
    expect((await listed('/api/user/user', { brand_id: b, email_verified: 1 })).count).toBe(2);
    expect((await listed('/api/user/user', { brand_id: b, country: 'FR' })).count).toBe(0);
    expect((await listed('/api/user/user', { brand_id: b, country: 'nz' })).count).toBe(1);
    // Both flags together are counted by their matches.
    const both = await listed('/api/user/user', { brand_id: b, active: 0, email_verified: 1 });
    expect(countsRecords(both.queries, 'users')).toBe(true);
    expect(both.count).toBe(2);
  });

  it('counts the matches of any other filter, the brand beside it too', async () => {
    const b = await brand();
    const lastname = unique('Narrowed');
    await createUser({ brand_id: b, lastname });
    await createUser({ lastname });
    for (const query of [{ lastname }, { lastname, brand_id: b }, { brand_id: b, created_at_min: 1 }]) {
      const { count, queries } = await listed('/api/user/user', query);
      expect(countsRecords(queries, 'users')).toBe(true);
      expect(count).toBe('lastname' in query ? ('brand_id' in query ? 1 : 2) : 1);
    }
  });

  it('stays exact under parallel creates', async () => {
    const b = await brand();
    await Promise.all(Array.from({ length: 12 }, () => createUser({ brand_id: b })));
    expect((await listed('/api/user/user', { brand_id: b })).count).toBe(12);
    expect((await listed('/api/user/user')).count).toBe(await counted("users WHERE type = 'user'"));
  });

  it('counts operators apart from users, and organisations per brand', async () => {
    const groups = [(await Group.findOne({ where: { type: 'operator' }, rejectOnEmpty: true })).id];
    expectSuccess(await api.post('/api/user/operator', { firstname: 'Counted', lastname: 'Agent', email: newEmail('agent'), groups }), 'Successfully created new operator!');
    const operators = await listed('/api/user/operator');
    expect(operators.count).toBe(await counted("users WHERE type = 'operator'"));
    expect(countsRecords(operators.queries, 'users')).toBe(false);
    for (const active of [0, 1]) {
      const some = await listed('/api/user/operator', { active });
      expect(countsRecords(some.queries, 'users')).toBe(false);
      expect(some.count).toBe(await counted("users WHERE type = 'operator' AND active = :active", { active }));
    }

    const b = await brand();
    const org = expectSuccess(await api.post('/api/user/organisation', { name: unique('Counted org'), brand_id: b }), 'Successfully created new organisation!');
    await Organisation.create({ name: unique('Raw org'), brand_id: b } as any);
    const all = await listed('/api/user/organisation');
    expect(all.count).toBe(await counted('organisations'));
    expect(countsRecords(all.queries, 'organisations')).toBe(false);
    expect((await listed('/api/user/organisation', { brand_id: b })).count).toBe(2);
    expectDeleted(await api.del(`/api/user/organisation/${org.id}`), 'organisation');
    expect((await listed('/api/user/organisation', { brand_id: b })).count).toBe(1);
    expect((await listed('/api/user/organisation')).count).toBe(await counted('organisations'));
  });
});
