/**
 * The IP ban list reads its `count` from the record counters (migration 079): narrowed by nothing
 * or by its `type` alone, exact whatever writes or deletes bans (the API, the expiry job,
 * statements of their own), with no COUNT over the bans; a filter the counters do not hold (`ip`)
 * counts its matches.
 */
import { expireBans } from '../../src/core/banExpiry';
import { execute, select } from '../../src/db/select';
import { nowSec, useApi } from '../helpers/app';
import { expectDeleted, expectList, expectSuccess } from '../helpers/envelope';
import { measureList } from '../helpers/queries';
import { uniqueIpv4 } from './support';

const api = useApi();
const BASE = '/api/core/ipban';

const counted = async (where = '1 = 1') => Number((await select<{ n: number }>(`SELECT COUNT(*) AS n FROM ip_bans WHERE ${where}`, {}))[0].n);

/** The list's count and whether it COUNTed the bans. */
async function listed(query: Record<string, unknown> = {}) {
  const { res, queries } = await measureList(api, BASE, { limit: 1, ...query });
  expectList(res);
  return { count: res.body.count as number, countedTable: queries.some((q) => /COUNT\(\*\)[^;]*FROM `ip_bans`/.test(q)) };
}

/** The counts of every ban and of each type, checked to come from the counters and to be the bans' own. */
async function expectCounts() {
  const all = await listed();
  expect(all).toEqual({ count: await counted(), countedTable: false });
  const byType = [];
  for (const type of [0, 1]) {
    const one = await listed({ type });
    expect({ type, ...one }).toEqual({ type, count: await counted(`type = ${type}`), countedTable: false });
    byType.push(one.count);
  }
  return { all: all.count, byType };
}

it('counts bans, of all types and of one, as they are made, changed, expired and deleted, from the counters', async () => {
  const start = await expectCounts();
  const temporary = expectSuccess(await api.post(BASE, { ip: uniqueIpv4(), type: 0, expiry_time: nowSec() + 3600 }), 'Successfully created new ban!');
  const permanent = expectSuccess(await api.post(BASE, { ip: uniqueIpv4(), type: 1 }), 'Successfully created new ban!');
  let now = await expectCounts();
  expect(now).toEqual({ all: start.all + 2, byType: [start.byType[0] + 1, start.byType[1] + 1] });

  // A ban made permanent moves between the types' counts.
  expectSuccess(await api.put(`${BASE}/${temporary.id}`, { type: 1 }), 'Successfully updated the ban!');
  now = await expectCounts();
  expect(now.byType).toEqual([start.byType[0], start.byType[1] + 2]);

  // Bans written, changed and deleted by statements; the expiry job deletes the expired ones.
  await execute(`INSERT INTO ip_bans (ip, reason, type, expiry, created_at, updated_at)
    SELECT CONCAT('10.88.0.', seq), 'counted', 0, IF(seq <= 3, 1000, :later), :at, :at FROM seq_1_to_5`, { later: nowSec() + 3600, at: nowSec() }, undefined);
  await execute("UPDATE ip_bans SET type = 1, expiry = NULL WHERE reason = 'counted' AND ip = '10.88.0.5'", {}, undefined);
  now = await expectCounts();
  expect(now).toEqual({ all: start.all + 7, byType: [start.byType[0] + 4, start.byType[1] + 3] });
  // (It may remove other tests' expired bans too: what follows is counted from here.)
  expect(await expireBans()).toBeGreaterThanOrEqual(3);
  const expired = await expectCounts();
  expect(await counted("reason = 'counted'")).toBe(2);

  // A filter the counters do not hold counts its matches.
  expect(await listed({ ip: '10.88.0.4' })).toEqual({ count: 1, countedTable: true });

  expectDeleted(await api.del(`${BASE}/${permanent.id}`), 'ban');
  await execute("DELETE FROM ip_bans WHERE reason = 'counted'", {}, undefined);
  now = await expectCounts();
  expect(now).toEqual({ all: expired.all - 3, byType: [expired.byType[0] - 1, expired.byType[1] - 2] });
  expect(await select("SELECT * FROM record_counts WHERE kind = 'ipban' AND n < 0", {})).toEqual([]);
});
