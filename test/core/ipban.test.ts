import { useApi, nowSec } from '../helpers/app';
import { expectError, expectList, expectNotFound, expectSuccess } from '../helpers/envelope';
import { expectTimestamps, ipv6Block, uniqueIpv4, uniqueIpv6 } from './support';

const api = useApi();
const BASE = '/api/core/ipban';
const FIELDS = ['created_at', 'event_api', 'event_operator', 'event_user', 'expiry', 'id', 'ip', 'reason', 'type', 'updated_at'];

async function create(form: Record<string, unknown>): Promise<any> {
  return expectSuccess(await api.post(BASE, form), 'Successfully created new ban!');
}

async function show(id: number): Promise<any> {
  return expectSuccess(await api.get(`${BASE}/${id}`));
}

async function listByIp(ip: string, query: Record<string, unknown> = {}) {
  const res = await api.get(BASE, { ip, ...query });
  return { data: expectList(res), count: res.body.count as number };
}

describe('POST /api/core/ipban', () => {
  it('creates a permanent ban with the defaults: every event flag 1, no reason, no expiry', async () => {
    const ip = uniqueIpv4();
    const before = nowSec();
    const ban = await create({ ip, type: 1 });
    expect(Object.keys(ban).sort()).toEqual(FIELDS);
    expect(ban).toMatchObject({ ip, reason: null, event_user: 1, event_operator: 1, event_api: 1, type: 1, expiry: null });
    expect(Number.isInteger(ban.id)).toBe(true);
    expectTimestamps(ban, before);
    expect(ban).not.toHaveProperty('expiry_time');
  });

  it('gives a temporary ban without expiry_time an expiry of created_at + 24 hours', async () => {
    const ban = await create({ ip: uniqueIpv4(), type: 0 });
    expect(ban.type).toBe(0);
    expect(ban.expiry).toBe(ban.created_at + 86400);
  });

  it('takes expiry_time in and returns it as expiry', async () => {
    const expiry = nowSec() + 3600;
    const ban = await create({ ip: uniqueIpv4(), type: 0, expiry_time: expiry });
    expect(ban.expiry).toBe(expiry);
    expect(ban).not.toHaveProperty('expiry_time');
    expect((await show(ban.id)).expiry).toBe(expiry);
  });

  it('stores the reason and the event flags given', async () => {
    const ip = uniqueIpv6();
    const ban = await create({ ip, type: 1, reason: 'Too many failed logins', event_user: 0, event_operator: 1, event_api: 0 });
    expect(ban).toMatchObject({ ip, reason: 'Too many failed logins', event_user: 0, event_operator: 1, event_api: 0, type: 1, expiry: null });
  });

  it('ignores fields that are not input: id, created_at, and expiry (the input is expiry_time)', async () => {
    const before = nowSec();
    const ban = await create({ ip: uniqueIpv4(), type: 0, id: 4000000000, created_at: 1000, expiry: 2000 });
    expect(ban.id).not.toBe(4000000000);
    expect(ban.created_at).toBeGreaterThanOrEqual(before);
    expect(ban.expiry).toBe(ban.created_at + 86400);
  });

  it('accepts a long reason of multi-byte characters (within the 65535-character limit) and returns it intact', async () => {
    const reason = 'é'.repeat(40000);
    const ban = await create({ ip: uniqueIpv4(), type: 1, reason });
    expect(ban.reason).toBe(reason);
  });

  it('refuses expiry_time on a permanent ban with a 422 and creates nothing', async () => {
    const ip = uniqueIpv4();
    expectError(await api.post(BASE, { ip, type: 1, expiry_time: nowSec() + 3600 }), 422, 'The expiry time can only be set for a temporary ban.');
    expect((await listByIp(ip)).count).toBe(0);
  });

  it('refuses an expiry_time in the past with a 422 and creates nothing', async () => {
    const ip = uniqueIpv4();
    expectError(await api.post(BASE, { ip, type: 0, expiry_time: nowSec() - 60 }), 422, 'The expiry time must be a time in the future.');
    expect((await listByIp(ip)).count).toBe(0);
  });

  const invalid: Array<[string, (ip: string) => Record<string, unknown>, string]> = [
    ['no ip', () => ({ type: 1 }), 'The ip field is required.'],
    ['an empty ip', () => ({ ip: '', type: 1 }), 'The ip field is required.'],
    ['no type', (ip) => ({ ip }), 'The type field is required.'],
    ['an ip that is not one', () => ({ ip: 'not-an-ip', type: 1 }), 'The ip must be a valid IP address.'],
    ['an IPv4 out of range', () => ({ ip: '256.1.1.1', type: 1 }), 'The ip must be a valid IP address.'],
    ['a CIDR range', () => ({ ip: '10.0.0.0/8', type: 1 }), 'The ip must be a valid IP address.'],
    ['a type that is no boolean', (ip) => ({ ip, type: 'sometimes' }), 'The type field must be true or false.'],
    ['an event_api that is no boolean', (ip) => ({ ip, type: 1, event_api: 'yes' }), 'The event api field must be true or false.'],
    ['an event_user of 2', (ip) => ({ ip, type: 1, event_user: 2 }), 'The event user field must be true or false.'],
    ['an event_operator that is no boolean', (ip) => ({ ip, type: 1, event_operator: 'on' }), 'The event operator field must be true or false.'],
    ['an expiry_time that is no integer', (ip) => ({ ip, type: 0, expiry_time: 'tomorrow' }), 'The expiry time must be an integer.'],
  ];
  it.each(invalid)('answers 422 to %s and creates nothing', async (_name, body, message) => {
    const ip = uniqueIpv4();
    expectError(await api.post(BASE, body(ip)), 422, message);
    expect((await listByIp(ip)).count).toBe(0);
  });
});

describe('GET /api/core/ipban/{id}', () => {
  it('shows the ban as it was created', async () => {
    const ban = await create({ ip: uniqueIpv6(), type: 0, reason: 'spam' });
    expect(await show(ban.id)).toEqual(ban);
  });

  it.each(['4294967295', '999999999', 'abc', '12abc', '0', '-1'])('answers 404 for the id %s', async (id) => {
    expectNotFound(await api.get(`${BASE}/${id}`), 'ban');
  });
});

describe('GET /api/core/ipban', () => {
  it('filters by exact ip: an address that only starts with it is not matched', async () => {
    const block = ipv6Block();
    const a = await create({ ip: `${block}:1`, type: 1 });
    const b = await create({ ip: `${block}:1`, type: 0 });
    const longer = await create({ ip: `${block}:11`, type: 1 });
    const { data, count } = await listByIp(`${block}:1`);
    expect(count).toBe(2);
    expect(data.map((d) => d.id)).toEqual([a.id, b.id]);
    expect(data.map((d) => d.id)).not.toContain(longer.id);
    expect(data[0]).toEqual(a);
    expect(data[1]).toEqual(b);
  });

  it('filters by type (1 permanent, 0 temporary) together with ip', async () => {
    const ip = uniqueIpv4();
    const permanent = await create({ ip, type: 1 });
    const temporary = await create({ ip, type: 0 });
    const perm = await listByIp(ip, { type: 1 });
    expect(perm.data.map((d) => d.id)).toEqual([permanent.id]);
    expect(perm.count).toBe(1);
    const temp = await listByIp(ip, { type: 0 });
    expect(temp.data.map((d) => d.id)).toEqual([temporary.id]);
    expect(temp.count).toBe(1);
    const tempByWord = await listByIp(ip, { type: 'false' });
    expect(tempByWord.data.map((d) => d.id)).toEqual([temporary.id]);
  });

  it('every listed ban of a type filter has that type', async () => {
    await create({ ip: uniqueIpv4(), type: 1 });
    await create({ ip: uniqueIpv4(), type: 0 });
    for (const type of [0, 1]) {
      const res = await api.get(BASE, { type, limit: 1000 });
      const data = expectList(res);
      expect(data.length).toBeGreaterThan(0);
      expect(data.every((d) => d.type === type)).toBe(true);
    }
  });

  it('answers an ip filter that matches nothing with an empty list and count 0', async () => {
    const { data, count } = await listByIp(uniqueIpv4());
    expect(data).toEqual([]);
    expect(count).toBe(0);
  });

  it('answers 422 to a type filter that is no boolean', async () => {
    expectError(await api.get(BASE, { type: 'permanent' }), 422, 'The type field must be true or false.');
  });
});

describe('PUT /api/core/ipban/{id}', () => {
  it('changes only the fields given: no defaults are applied on update', async () => {
    const ip = uniqueIpv4();
    const ban = await create({ ip, type: 0, reason: 'first', event_user: 0, event_operator: 0, event_api: 0 });
    const res = await api.put(`${BASE}/${ban.id}`, { reason: 'second' });
    const updated = expectSuccess(res, 'Successfully updated the ban!');
    expect(updated).toEqual({ ...ban, reason: 'second', updated_at: updated.updated_at });
    expect(updated.updated_at).toBeGreaterThanOrEqual(ban.updated_at);
    expect(await show(ban.id)).toEqual(updated);
  });

  it('accepts an empty update and changes nothing', async () => {
    const ban = await create({ ip: uniqueIpv4(), type: 0, reason: 'keep' });
    const updated = expectSuccess(await api.put(`${BASE}/${ban.id}`, {}), 'Successfully updated the ban!');
    expect({ ...updated, updated_at: 0 }).toEqual({ ...ban, updated_at: 0 });
  });

  it('updates every field', async () => {
    const ban = await create({ ip: uniqueIpv4(), type: 1 });
    const ip = uniqueIpv6();
    const expiry = nowSec() + 7200;
    const updated = expectSuccess(
      await api.put(`${BASE}/${ban.id}`, { ip, reason: 'changed', type: 0, expiry_time: expiry, event_user: 0, event_operator: 0, event_api: 0 }),
      'Successfully updated the ban!',
    );
    expect(updated).toMatchObject({ id: ban.id, ip, reason: 'changed', type: 0, expiry, event_user: 0, event_operator: 0, event_api: 0, created_at: ban.created_at });
  });

  it('clears the reason when it is sent empty', async () => {
    const ban = await create({ ip: uniqueIpv4(), type: 1, reason: 'to be cleared' });
    const updated = expectSuccess(await api.put(`${BASE}/${ban.id}`, { reason: '' }), 'Successfully updated the ban!');
    expect(updated.reason).toBeNull();
  });

  it('keeps the expiry of a temporary ban when it is not given', async () => {
    const expiry = nowSec() + 5000;
    const ban = await create({ ip: uniqueIpv4(), type: 0, expiry_time: expiry });
    const updated = expectSuccess(await api.put(`${BASE}/${ban.id}`, { event_user: 0 }), 'Successfully updated the ban!');
    expect(updated.expiry).toBe(expiry);
    expect(updated.type).toBe(0);
  });

  it('changes the expiry of a temporary ban', async () => {
    const ban = await create({ ip: uniqueIpv4(), type: 0 });
    const expiry = nowSec() + 99999;
    const updated = expectSuccess(await api.put(`${BASE}/${ban.id}`, { expiry_time: expiry }), 'Successfully updated the ban!');
    expect(updated.expiry).toBe(expiry);
  });

  it('drops the expiry when a temporary ban becomes permanent', async () => {
    const ban = await create({ ip: uniqueIpv4(), type: 0 });
    expect(ban.expiry).not.toBeNull();
    const updated = expectSuccess(await api.put(`${BASE}/${ban.id}`, { type: 1 }), 'Successfully updated the ban!');
    expect(updated.type).toBe(1);
    expect(updated.expiry).toBeNull();
  });

  it('gives a permanent ban made temporary an expiry 24 hours after the update', async () => {
    const ban = await create({ ip: uniqueIpv4(), type: 1 });
    const before = nowSec();
    const updated = expectSuccess(await api.put(`${BASE}/${ban.id}`, { type: 0 }), 'Successfully updated the ban!');
    const after = nowSec();
    expect(updated.type).toBe(0);
    expect(updated.expiry).toBeGreaterThanOrEqual(before + 86400);
    expect(updated.expiry).toBeLessThanOrEqual(after + 86400);
  });

  it('ignores id and created_at in the body', async () => {
    const ban = await create({ ip: uniqueIpv4(), type: 1 });
    const updated = expectSuccess(await api.put(`${BASE}/${ban.id}`, { id: ban.id + 1000, created_at: 5, reason: 'x' }), 'Successfully updated the ban!');
    expect(updated.id).toBe(ban.id);
    expect(updated.created_at).toBe(ban.created_at);
  });

  const invalid: Array<[string, Record<string, unknown>, string]> = [
    ['an invalid ip', { ip: 'not-an-ip' }, 'The ip must be a valid IP address.'],
    ['an empty ip', { ip: '' }, 'The ip field is required.'],
    ['a type that is no boolean', { type: 7 }, 'The type field must be true or false.'],
    ['an event_api that is no boolean', { event_api: 'maybe', reason: 'must not be saved' }, 'The event api field must be true or false.'],
    ['an expiry_time on a permanent ban', { expiry_time: nowSec() + 3600, reason: 'must not be saved' }, 'The expiry time can only be set for a temporary ban.'],
    ['an expiry_time in the past when making the ban temporary', { type: 0, expiry_time: nowSec() - 3600 }, 'The expiry time must be a time in the future.'],
  ];
  it.each(invalid)('answers 422 to %s and leaves the ban unchanged', async (_name, body, message) => {
    const ban = await create({ ip: uniqueIpv4(), type: 1, reason: 'original' });
    expectError(await api.put(`${BASE}/${ban.id}`, body), 422, message);
    expect(await show(ban.id)).toEqual(ban);
  });

  it.each(['4294967295', 'abc'])('answers 404 for the id %s, whatever the body', async (id) => {
    expectNotFound(await api.put(`${BASE}/${id}`, { reason: 'x' }), 'ban');
    expectNotFound(await api.put(`${BASE}/${id}`, { ip: 'not-an-ip' }), 'ban');
  });
});

describe('DELETE /api/core/ipban/{id}', () => {
  it('deletes the ban: data null, then 404', async () => {
    const ip = uniqueIpv4();
    const ban = await create({ ip, type: 1 });
    const res = await api.del(`${BASE}/${ban.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'success', message: 'Successfully deleted the ban!', data: null });
    expectNotFound(await api.get(`${BASE}/${ban.id}`), 'ban');
    expectNotFound(await api.del(`${BASE}/${ban.id}`), 'ban');
    expect((await listByIp(ip)).count).toBe(0);
  });

  it('deletes only that ban', async () => {
    const ip = uniqueIpv4();
    const a = await create({ ip, type: 1 });
    const b = await create({ ip, type: 0 });
    expect((await api.del(`${BASE}/${a.id}`)).status).toBe(200);
    expect(await show(b.id)).toEqual(b);
  });

  it.each(['4294967295', 'abc'])('answers 404 for the id %s', async (id) => {
    expectNotFound(await api.del(`${BASE}/${id}`), 'ban');
  });
});
