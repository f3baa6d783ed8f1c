import { useApi, nowSec } from '../helpers/app';
import { expectError, expectList, expectNotFound, expectSuccess } from '../helpers/envelope';
import { expectTimestamps, ipv6Block, uniqueIpv4, uniqueIpv6 } from './support';

const api = useApi();
const BASE = '/api/core/ipwhitelist';
const FIELDS = ['created_at', 'description', 'event_api', 'event_operator', 'event_user', 'id', 'ip', 'updated_at'];

async function create(form: Record<string, unknown>): Promise<any> {
  return expectSuccess(await api.post(BASE, form), 'Successfully created new whitelisted ip!');
}

async function show(id: number): Promise<any> {
  return expectSuccess(await api.get(`${BASE}/${id}`));
}

async function listByIp(ip: string, query: Record<string, unknown> = {}) {
  const res = await api.get(BASE, { ip, ...query });
  return { data: expectList(res), count: res.body.count as number };
}

describe('POST /api/core/ipwhitelist', () => {
  it('creates an entry with the defaults: every event flag 1, no description', async () => {
    const ip = uniqueIpv4();
    const before = nowSec();
    const entry = await create({ ip });
    expect(Object.keys(entry).sort()).toEqual(FIELDS);
    expect(entry).toMatchObject({ ip, description: null, event_user: 1, event_operator: 1, event_api: 1 });
    expect(Number.isInteger(entry.id)).toBe(true);
    expectTimestamps(entry, before);
  });

  it('stores the description and the event flags given', async () => {
    const ip = uniqueIpv6();
    const entry = await create({ ip, description: 'Office ✓ 🏢', event_user: 0, event_operator: 0, event_api: 1 });
    expect(entry).toMatchObject({ ip, description: 'Office ✓ 🏢', event_user: 0, event_operator: 0, event_api: 1 });
  });

  it('accepts a long description of multi-byte characters (within the 65535-character limit) and returns it intact', async () => {
    const description = 'ü'.repeat(40000);
    const entry = await create({ ip: uniqueIpv4(), description });
    expect(entry.description).toBe(description);
  });

  const invalid: Array<[string, (ip: string) => Record<string, unknown>, string]> = [
    ['no ip', () => ({ description: 'x' }), 'The ip field is required.'],
    ['an empty ip', () => ({ ip: '' }), 'The ip field is required.'],
    ['an ip that is not one', () => ({ ip: 'localhost' }), 'The ip must be a valid IP address.'],
    ['a CIDR range', () => ({ ip: '192.0.2.0/24' }), 'The ip must be a valid IP address.'],
    ['an event_api that is no boolean', (ip) => ({ ip, event_api: 'yes' }), 'The event api field must be true or false.'],
    ['an event_user that is no boolean', (ip) => ({ ip, event_user: '2' }), 'The event user field must be true or false.'],
    ['an event_operator that is no boolean', (ip) => ({ ip, event_operator: 'no' }), 'The event operator field must be true or false.'],
  ];
  it.each(invalid)('answers 422 to %s and creates nothing', async (_name, body, message) => {
    const ip = uniqueIpv4();
    expectError(await api.post(BASE, body(ip)), 422, message);
    expect((await listByIp(ip)).count).toBe(0);
  });
});

describe('GET /api/core/ipwhitelist/{id}', () => {
  it('shows the entry as it was created', async () => {
    const entry = await create({ ip: uniqueIpv4(), description: 'VPN' });
    expect(await show(entry.id)).toEqual(entry);
  });

  it.each(['4294967295', 'abc', '1x'])('answers 404 for the id %s', async (id) => {
    expectNotFound(await api.get(`${BASE}/${id}`), 'whitelisted ip');
  });
});

describe('GET /api/core/ipwhitelist', () => {
  it('filters by exact ip', async () => {
    const block = ipv6Block();
    const a = await create({ ip: `${block}:2` });
    const b = await create({ ip: `${block}:2`, description: 'second' });
    const other = await create({ ip: `${block}:22` });
    const { data, count } = await listByIp(`${block}:2`);
    expect(count).toBe(2);
    expect(data).toEqual([a, b]);
    expect(data.map((d) => d.id)).not.toContain(other.id);
  });

  it('answers an ip filter that matches nothing with an empty list and count 0', async () => {
    expect(await listByIp(uniqueIpv4())).toEqual({ data: [], count: 0 });
  });

  it('lists entries without a filter', async () => {
    const entry = await create({ ip: uniqueIpv4() });
    const data = expectList(await api.get(BASE, { order_direction: 'desc', limit: 1000 }));
    expect(data).toContainEqual(entry);
  });
});

describe('PUT /api/core/ipwhitelist/{id}', () => {
  it('changes only the fields given: no defaults are applied on update', async () => {
    const entry = await create({ ip: uniqueIpv4(), description: 'one', event_user: 0, event_operator: 0, event_api: 0 });
    const updated = expectSuccess(await api.put(`${BASE}/${entry.id}`, { description: 'two' }), 'Successfully updated the whitelisted ip!');
    expect(updated).toEqual({ ...entry, description: 'two', updated_at: updated.updated_at });
    expect(updated.updated_at).toBeGreaterThanOrEqual(entry.updated_at);
    expect(await show(entry.id)).toEqual(updated);
  });

  it('updates every field', async () => {
    const entry = await create({ ip: uniqueIpv4() });
    const ip = uniqueIpv6();
    const updated = expectSuccess(
      await api.put(`${BASE}/${entry.id}`, { ip, description: 'new', event_user: 0, event_operator: 'false', event_api: 'true' }),
      'Successfully updated the whitelisted ip!',
    );
    expect(updated).toMatchObject({ id: entry.id, ip, description: 'new', event_user: 0, event_operator: 0, event_api: 1, created_at: entry.created_at });
  });

  it('clears the description when it is sent empty', async () => {
    const entry = await create({ ip: uniqueIpv4(), description: 'gone soon' });
    const updated = expectSuccess(await api.put(`${BASE}/${entry.id}`, { description: '' }), 'Successfully updated the whitelisted ip!');
    expect(updated.description).toBeNull();
  });

  const invalid: Array<[string, Record<string, unknown>, string]> = [
    ['an invalid ip', { ip: '1.2.3', description: 'must not be saved' }, 'The ip must be a valid IP address.'],
    ['an empty ip', { ip: '' }, 'The ip field is required.'],
    ['an event_api that is no boolean', { event_api: 'perhaps', description: 'must not be saved' }, 'The event api field must be true or false.'],
  ];
  it.each(invalid)('answers 422 to %s and leaves the entry unchanged', async (_name, body, message) => {
    const entry = await create({ ip: uniqueIpv4(), description: 'original' });
    expectError(await api.put(`${BASE}/${entry.id}`, body), 422, message);
    expect(await show(entry.id)).toEqual(entry);
  });

  it.each(['4294967295', 'abc'])('answers 404 for the id %s', async (id) => {
    expectNotFound(await api.put(`${BASE}/${id}`, { description: 'x' }), 'whitelisted ip');
  });
});

describe('DELETE /api/core/ipwhitelist/{id}', () => {
  it('deletes the entry: data null, then 404', async () => {
    const ip = uniqueIpv4();
    const entry = await create({ ip });
    const res = await api.del(`${BASE}/${entry.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'success', message: 'Successfully deleted the whitelisted ip!', data: null });
    expectNotFound(await api.get(`${BASE}/${entry.id}`), 'whitelisted ip');
    expectNotFound(await api.del(`${BASE}/${entry.id}`), 'whitelisted ip');
    expect((await listByIp(ip)).count).toBe(0);
  });

  it.each(['4294967295', 'abc'])('answers 404 for the id %s', async (id) => {
    expectNotFound(await api.del(`${BASE}/${id}`), 'whitelisted ip');
  });
});
