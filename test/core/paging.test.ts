import { Brand, IpBan, IpWhitelist, SpamRule } from '../../src/db/models';
import { useApi, unique, nowSec } from '../helpers/app';
import { expectError, expectList } from '../helpers/envelope';
import { uniqueIpv4 } from './support';

const api = useApi();
const BASE = '/api/core/ipban';

/** `n` temporary bans of one address, with increasing ids and decreasing expiry; returns their ids in creation order. */
async function bansOf(ip: string, n: number): Promise<number[]> {
  const t = nowSec();
  const rows = await IpBan.bulkCreate(Array.from({ length: n }, (_, i) => ({ ip, type: 0, event_api: 0, expiry: t + 100000 - i * 10 })));
  return rows.map((r) => r.id);
}

async function page(ip: string, query: Record<string, unknown> = {}) {
  const res = await api.get(BASE, { ip, ...query });
  return { ids: expectList(res).map((d) => d.id), count: res.body.count as number };
}

describe('PAGING', () => {
  let ip: string;
  let ids: number[];
  beforeAll(async () => {
    ip = uniqueIpv4();
    ids = await bansOf(ip, 5);
  });

  it('starts at the first result by default, in id order', async () => {
    expect(await page(ip)).toEqual({ ids, count: 5 });
  });

  it('counts what matches, not the page', async () => {
    expect(await page(ip, { limit: 2 })).toEqual({ ids: ids.slice(0, 2), count: 5 });
  });

  it('takes an empty parameter as one not given (form builders send every field)', async () => {
    expect(await page(ip, { start: '', limit: '', order_column: '', order_direction: '', lang: '', created_at_min: '' })).toEqual({ ids, count: 5 });
    await api.post('/api/user/user', { email: `${unique('u')}@example.com` });
    const users = await api.get('/api/user/user', { search: '', email: '', firstname: '', organisation_name: '', limit: 1 });
    expect(expectList(users)).toHaveLength(1);
    expect(users.body.count).toBeGreaterThanOrEqual(1);
    // A required parameter left empty is still missing.
    expectError(await api.get('/api/ticket/message', { ticket_id: '' }), 422, 'The ticket id field is required.');
  });

  it('takes a parameter of spaces alone as one not given, like an empty one', async () => {
    const all = await api.get('/api/ticket/ticket', {});
    const spaced = await api.get('/api/ticket/ticket', { search: '  ', number: ' ', user_email: ' ', limit: ' ', start: '\t' });
    expect(expectList(spaced).map((t) => t.id)).toEqual(expectList(all).map((t) => t.id));
    expect(spaced.body.count).toBe(all.body.count);
    expectError(await api.get('/api/ticket/message', { ticket_id: '  ' }), 422, 'The ticket id field is required.');
  });

  it('treats start as 1-based', async () => {
    expect(await page(ip, { start: 1, limit: 2 })).toEqual({ ids: ids.slice(0, 2), count: 5 });
    expect(await page(ip, { start: 2, limit: 2 })).toEqual({ ids: ids.slice(1, 3), count: 5 });
    expect(await page(ip, { start: 5, limit: 2 })).toEqual({ ids: ids.slice(4), count: 5 });
  });

  it('returns an empty page past the end, with the count', async () => {
    expect(await page(ip, { start: 6 })).toEqual({ ids: [], count: 5 });
    expect(await page(ip, { start: 1000 })).toEqual({ ids: [], count: 5 });
  });

  it('sorts in both directions', async () => {
    expect((await page(ip, { order_direction: 'desc' })).ids).toEqual([...ids].reverse());
    expect((await page(ip, { order_direction: 'DESC' })).ids).toEqual([...ids].reverse());
    expect((await page(ip, { order_direction: 'asc' })).ids).toEqual(ids);
    expect((await page(ip, { order_column: 'id', order_direction: 'desc', start: 2, limit: 2 })).ids).toEqual([ids[3], ids[2]]);
  });

  it('sorts by a listed column', async () => {
    // The expiry decreases as the id increases.
    expect((await page(ip, { order_column: 'expiry' })).ids).toEqual([...ids].reverse());
    expect((await page(ip, { order_column: 'expiry', order_direction: 'desc' })).ids).toEqual(ids);
  });

  it.each([
    ['an unknown column', 'nonsense'],
    ['a column that is not sortable', 'reason'],
    ['SQL text', 'id; DROP TABLE ip_bans'],
    ['SQL text in a function', 'IF(1=1,id,ip)'],
    ['a quoted column', '`id`'],
  ])('answers %s as order_column with 422', async (_name, column) => {
    expectError(await api.get(BASE, { ip, order_column: column }), 422, 'The selected order column is invalid.');
    expect((await page(ip)).count).toBe(5);
  });

  it.each(['sideways', 'asc; DELETE FROM ip_bans'])('answers the order_direction %j with 422', async (direction) => {
    expectError(await api.get(BASE, { ip, order_direction: direction }), 422, 'The selected order direction is invalid.');
  });

  it.each([
    [{ start: 0 }, 'The start must be at least 1.'],
    [{ start: -3 }, 'The start must be at least 1.'],
    [{ start: 'first' }, 'The start must be an integer.'],
    [{ limit: 0 }, 'The limit must be at least 1.'],
    [{ limit: 2.5 }, 'The limit must be an integer.'],
  ])('answers %j with 422', async (query, message) => {
    expectError(await api.get(BASE, { ip, ...query }), 422, message);
  });

  it('accepts a limit of 1000', async () => {
    expect(await page(ip, { limit: 1000 })).toEqual({ ids, count: 5 });
  });

  it.each([1001, 1000000000, '99999999999999999999'])('clamps a limit of %j to 1000 (real clients send huge ones)', async (limit) => {
    expect(await page(ip, { limit })).toEqual({ ids, count: 5 });
  });
});

describe('integers sent as text', () => {
  let ip: string;
  let ids: number[];
  beforeAll(async () => {
    ip = uniqueIpv4();
    ids = await bansOf(ip, 3);
  });

  // joi's number() read these as 1000, 100, 1, 5 and 5: only plain decimal integers are integers.
  it.each([
    [{ start: '1e3' }, 'The start must be an integer.'],
    [{ limit: '1e2' }, 'The limit must be an integer.'],
    [{ start: '0x10' }, 'The start must be an integer.'],
    [{ start: '1.0' }, 'The start must be an integer.'],
    [{ start: ' 5' }, 'The start must be an integer.'],
    [{ limit: '5 ' }, 'The limit must be an integer.'],
    [{ limit: '+5' }, 'The limit must be an integer.'],
  ])('answers %j with 422', async (query, message) => {
    expectError(await api.get(BASE, { ip, ...query }), 422, message);
  });

  it('still reads plain decimal integers, leading zeros included', async () => {
    expect(await page(ip, { start: '2', limit: '01' })).toEqual({ ids: ids.slice(1, 2), count: 3 });
  });

  it('refuses them in id filters and id lists (`mixed`) alike', async () => {
    expectError(await api.get('/api/user/user', { created_at_min: '1e9' }), 422, 'The created at min must be an integer.');
    expectError(await api.get('/api/ticket/priority', { department_id: '1e3' }), 422, 'The department id must be an integer.');
    expectError(await api.get('/api/ticket/ticket', { status: '1e3' }), 422, 'The selected status is invalid.');
    expectError(await api.get('/api/ticket/ticket', { status: '1, 2.0' }), 422, 'The selected status is invalid.');
    expect(expectList(await api.get('/api/ticket/ticket', { status: '2147483647,2147483646' }))).toEqual([]);
  });

  it('refuses them in form bodies and JSON strings; a JSON number is a number', async () => {
    const text = unique('integers');
    const expiry_time = nowSec() + 3600;
    expectError(await api.post('/api/core/ipban', { ip: uniqueIpv4(), type: 0, expiry_time: `${expiry_time}.0` }), 422, 'The expiry time must be an integer.');
    expectError(await api.postJson('/api/core/ipban', { ip: uniqueIpv4(), type: 0, expiry_time: `${expiry_time / 1000}e3` }), 422, 'The expiry time must be an integer.');
    // One of a fixed set of integers: refused as any other value there.
    expectError(await api.post('/api/core/spamrule', { text, type: '1e0' }), 422, 'The selected type is invalid.');
    expectError(await api.post('/api/core/spamrule', { text, type: '1.0' }), 422, 'The selected type is invalid.');
    expectError(await api.postJson('/api/core/spamrule', { text, type: '1e0' }), 422, 'The selected type is invalid.');
    const form = await api.post('/api/core/spamrule', { text, type: '1' });
    expect(form.status).toBe(200);
    expect(form.body.data.type).toBe(1);
    const json = await api.postJson('/api/core/spamrule', { text: unique('integers'), type: 2 });
    expect(json.status).toBe(200);
    expect(json.body.data.type).toBe(2);
    const expiry = 1e3 * 2e6; // a JSON number, however it is written, is that number
    const ban = await api.postJson('/api/core/ipban', { ip: uniqueIpv4(), type: 0, expiry_time: expiry });
    expect(ban.status).toBe(200);
    expect(ban.body.data.expiry).toBe(expiry);
  });
});

describe('the default limit', () => {
  it('is 50, and the count is every match', async () => {
    const ip = uniqueIpv4();
    const ids = await bansOf(ip, 55);
    expect(await page(ip)).toEqual({ ids: ids.slice(0, 50), count: 55 });
    expect(await page(ip, { start: 51 })).toEqual({ ids: ids.slice(50), count: 55 });
    expect(await page(ip, { limit: 1000 })).toEqual({ ids, count: 55 });
  });

  it('is at most 1000: a larger one is clamped, and the count stays the total', async () => {
    const ip = uniqueIpv4();
    const ids = await bansOf(ip, 1003);
    expect(await page(ip, { limit: 1000000000 })).toEqual({ ids: ids.slice(0, 1000), count: 1003 });
  });
});

describe('paging on every Core list', () => {
  beforeAll(async () => {
    // At least two records in each list (languages are seeded).
    await Brand.bulkCreate([{ name: unique('Paging') }, { name: unique('Paging') }]);
    await IpWhitelist.bulkCreate([{ ip: uniqueIpv4(), event_api: 0 }, { ip: uniqueIpv4(), event_api: 0 }]);
    await SpamRule.bulkCreate([{ text: unique('paging'), type: 0 }, { text: unique('paging'), type: 1 }]);
  });

  it.each(['/api/core/brand', '/api/core/ipwhitelist', '/api/core/language', '/api/core/spamrule'])('%s takes start, limit and the checks', async (path) => {
    const all = await api.get(path, { limit: 1000 });
    const total = all.body.count as number;
    expect(total).toBeGreaterThanOrEqual(2);
    expect(expectList(all)).toHaveLength(total);
    const second = await api.get(path, { start: 2, limit: 1 });
    expect(expectList(second).map((d) => d.id)).toEqual([all.body.data[1].id]);
    expect(second.body.count).toBe(total);
    const desc = await api.get(path, { order_direction: 'desc', limit: 1 });
    expect(expectList(desc).map((d) => d.id)).toEqual([all.body.data[total - 1].id]);
    expect(expectList(await api.get(path, { limit: 1000000000 })).length).toBe(Math.min(total, 1000));
    expectError(await api.get(path, { start: 0 }), 422, 'The start must be at least 1.');
    expectError(await api.get(path, { order_column: 'id desc' }), 422, 'The selected order column is invalid.');
    expectError(await api.get(path, { order_direction: 'up' }), 422, 'The selected order direction is invalid.');
  });
});
