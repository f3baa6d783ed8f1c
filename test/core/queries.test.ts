import { Brand, IpBan, IpWhitelist, Language, SpamRule, Translation } from '../../src/db/models';
import { useApi, unique } from '../helpers/app';
import { expectList } from '../helpers/envelope';
import { measureList } from '../helpers/queries';
import { uniqueIpv4 } from './support';

const api = useApi();
const RECORDS = 60;

const measure = (path: string, query: Record<string, unknown>) => measureList(api, path, query);

const banIp = uniqueIpv4();
const whitelistIp = uniqueIpv4();

beforeAll(async () => {
  const tag = unique('q');
  await Brand.bulkCreate(Array.from({ length: RECORDS }, (_, i) => ({ name: `${tag} brand ${i}` })));
  await IpBan.bulkCreate(Array.from({ length: RECORDS }, (_, i) => ({ ip: banIp, type: i % 2, event_api: 0, expiry: i % 2 ? null : 4000000000 })));
  await IpWhitelist.bulkCreate(Array.from({ length: RECORDS }, () => ({ ip: whitelistIp, event_api: 0 })));
  await SpamRule.bulkCreate(Array.from({ length: RECORDS }, (_, i) => ({ text: `${tag} rule ${i}`, type: i % 3 })));
  // Languages (with a translation each, so loading translations is part of the work).
  const stamp = Date.now().toString(36).slice(-5);
  const languages = await Language.bulkCreate(Array.from({ length: RECORDS }, (_, i) => ({ code: `q${stamp}${i}`, name: `${tag} language ${i}`, enabled: 1 })));
  await Translation.bulkCreate(languages.map((l) => ({ record_type: 'language', record_id: l.id, locale: 'fr', field: 'name', value: `${l.name} (fr)` })));
});

describe('each Core list endpoint runs a fixed number of queries whatever the page size', () => {
  it.each([
    ['/api/core/brand', {}],
    ['/api/core/brand', { enabled: 1 }],
    ['/api/core/ipban', {}],
    ['/api/core/ipban', { ip: banIp }],
    ['/api/core/ipban', { ip: banIp, type: 0, order_column: 'expiry' }],
    ['/api/core/ipwhitelist', {}],
    ['/api/core/ipwhitelist', { ip: whitelistIp }],
    ['/api/core/language', {}],
    ['/api/core/language', { lang: 'fr' }],
    ['/api/core/language', { enabled: 1, order_column: 'code' }],
    ['/api/core/spamrule', {}],
    ['/api/core/spamrule', { order_column: 'type', order_direction: 'desc' }],
  ] as Array<[string, Record<string, unknown>]>)('GET %s %j', async (path, query) => {
    await api.get(path, query); // warm-up
    const one = await measure(path, { ...query, limit: 1 });
    const fifty = await measure(path, { ...query, limit: 50 });
    expect(expectList(one.res)).toHaveLength(1);
    expect(Math.min(fifty.res.body.count, 50)).toBeGreaterThanOrEqual(30);
    expect(expectList(fifty.res)).toHaveLength(Math.min(fifty.res.body.count, 50));
    expect(fifty.queries.length).toBe(one.queries.length);
    // The token and ban look-ups are cached (auth/accessCache): count and page, plus relations.
    expect(fifty.queries.length).toBeGreaterThanOrEqual(2);
    expect(fifty.queries.length).toBeLessThanOrEqual(4);
  });

  it('shows the queries it counts', async () => {
    const { queries } = await measure('/api/core/spamrule', { limit: 5 });
    expect(queries.some((q) => /spam_rules/.test(q))).toBe(true);
    // A known token and an address without a ban are cached after the first request.
    expect(queries.some((q) => /api_tokens|ip_bans/.test(q))).toBe(false);
  });
});
