import request from 'supertest';
import { expireBans } from '../../src/core/banExpiry';
import { IpBan, IpWhitelist } from '../../src/db/models';
import { useApi, nowSec } from '../helpers/app';
import { expectError, expectList, expectSuccess } from '../helpers/envelope';
import { uniqueIpv4, uniqueIpv6 } from './support';

const api = useApi();
// The first sentence is what clients match; until when and how to lift it follow (test/core/ban-message.test.ts).
const BANNED = { status: 'error', message: expect.stringMatching(/^Your IP address is banned from using the API\. /), data: null };

/** A request posing as the client `ip` (the tests trust X-Forwarded-For from loopback). */
const asClient = (ip: string, path = '/api/core/brand/1') => request(api.app).get(path).auth(api.token, 'x').set('X-Forwarded-For', ip);

async function ban(form: Record<string, unknown>): Promise<any> {
  return expectSuccess(await api.post('/api/core/ipban', form), 'Successfully created new ban!');
}

async function whitelist(form: Record<string, unknown>): Promise<any> {
  return expectSuccess(await api.post('/api/core/ipwhitelist', form), 'Successfully created new whitelisted ip!');
}

async function expectBanned(ip: string) {
  const res = await asClient(ip);
  expect(res.status).toBe(403);
  expect(res.body).toEqual(BANNED);
}

async function expectAllowed(ip: string) {
  const res = await asClient(ip);
  expect(res.status).toBe(200);
  expect(res.body.data.id).toBe(1);
}

describe('IP bans on the API', () => {
  it('lets a client in that is not banned', async () => {
    await expectAllowed(uniqueIpv4());
  });

  it('refuses a client banned permanently with event_api=1: 403 with the envelope', async () => {
    const ip = uniqueIpv4();
    await expectAllowed(ip);
    await ban({ ip, type: 1, event_api: 1 });
    await expectBanned(ip);
  });

  it('refuses a banned client on every call, with or without a token', async () => {
    const ip = uniqueIpv4();
    await ban({ ip, type: 1 });
    const withoutToken = await request(api.app).get('/api/core/settings').set('X-Forwarded-For', ip);
    expect(withoutToken.status).toBe(403);
    expect(withoutToken.body).toEqual(BANNED);
    const post = await request(api.app).post('/api/core/ipban').auth(api.token, 'x').set('X-Forwarded-For', ip).type('form').send({ ip: uniqueIpv4(), type: 1 });
    expect(post.status).toBe(403);
    expect(post.body).toEqual(BANNED);
  });

  it('refuses an IPv6 client that is banned', async () => {
    const ip = uniqueIpv6();
    await ban({ ip, type: 1 });
    await expectBanned(ip);
  });

  it('refuses a client banned temporarily until the ban expires', async () => {
    const ip = uniqueIpv4();
    await ban({ ip, type: 0, expiry_time: nowSec() + 3600 });
    await expectBanned(ip);
  });

  it('does not refuse other clients', async () => {
    const banned = uniqueIpv4();
    await ban({ ip: banned, type: 1 });
    await expectBanned(banned);
    await expectAllowed(uniqueIpv4());
  });

  it('does not apply a ban with event_api=0', async () => {
    const ip = uniqueIpv4();
    await ban({ ip, type: 1, event_api: 0, event_user: 1, event_operator: 1 });
    await expectAllowed(ip);
  });

  it('lets a client in again once the ban is deleted', async () => {
    const ip = uniqueIpv4();
    const b = await ban({ ip, type: 1 });
    await expectBanned(ip);
    expect((await api.del(`/api/core/ipban/${b.id}`)).status).toBe(200);
    await expectAllowed(ip);
  });

  it('applies a ban once it is updated to event_api=1', async () => {
    const ip = uniqueIpv4();
    const b = await ban({ ip, type: 1, event_api: 0 });
    await expectAllowed(ip);
    expectSuccess(await api.put(`/api/core/ipban/${b.id}`, { event_api: 1 }), 'Successfully updated the ban!');
    await expectBanned(ip);
  });

  it('treats an IPv4-mapped IPv6 client address as the IPv4 address', async () => {
    const ip = uniqueIpv4();
    await ban({ ip, type: 1 });
    await expectBanned(`::ffff:${ip}`);
  });

  it('applies a ban written in another notation of the same IPv6 address', async () => {
    // fd00:… with every group written out in four digits: the same address as the short form.
    const short = uniqueIpv6();
    const long = short.split(':').map((g) => g.padStart(4, '0')).join(':').toUpperCase();
    expect(long).not.toBe(short);
    await ban({ ip: long, type: 1 });
    await expectBanned(short);
  });
});

describe('the whitelist on the API', () => {
  it('lets a banned client in when whitelisted with event_api=1', async () => {
    const ip = uniqueIpv4();
    await ban({ ip, type: 1 });
    await expectBanned(ip);
    await whitelist({ ip, event_api: 1 });
    await expectAllowed(ip);
  });

  it('does not override a ban with an entry of event_api=0', async () => {
    const ip = uniqueIpv4();
    await ban({ ip, type: 1 });
    await whitelist({ ip, event_api: 0, event_user: 1, event_operator: 1 });
    await expectBanned(ip);
  });

  it('refuses the client again when the whitelist entry is deleted', async () => {
    const ip = uniqueIpv4();
    await ban({ ip, type: 1 });
    const w = await whitelist({ ip });
    await expectAllowed(ip);
    expect((await api.del(`/api/core/ipwhitelist/${w.id}`)).status).toBe(200);
    await expectBanned(ip);
  });
});

describe('ban expiry', () => {
  it('does not apply an expired temporary ban even though its row still exists', async () => {
    const ip = uniqueIpv4();
    const b = await ban({ ip, type: 0, expiry_time: nowSec() + 3600 });
    await expectBanned(ip);
    await IpBan.update({ expiry: nowSec() - 10 }, { where: { id: b.id } });
    await expectAllowed(ip);
    const row = await IpBan.findByPk(b.id);
    expect(row).not.toBeNull();
    expect(row!.expiry).toBeLessThan(nowSec());
  });

  it('does not apply a temporary ban created directly with an expiry in the past', async () => {
    const ip = uniqueIpv4();
    await IpBan.create({ ip, type: 0, event_api: 1, expiry: nowSec() - 1 });
    await expectAllowed(ip);
  });

  it('expireBans() deletes the expired temporary bans and nothing else', async () => {
    const expired = await IpBan.create({ ip: uniqueIpv4(), type: 0, expiry: nowSec() - 100 });
    const expiredNow = await IpBan.create({ ip: uniqueIpv4(), type: 0, expiry: nowSec() - 1 });
    const future = await IpBan.create({ ip: uniqueIpv4(), type: 0, expiry: nowSec() + 3600 });
    const permanent = await IpBan.create({ ip: uniqueIpv4(), type: 1, expiry: null });
    // A permanent ban never expires, whatever its expiry column says.
    const permanentWithPast = await IpBan.create({ ip: uniqueIpv4(), type: 1, expiry: nowSec() - 100 });

    const deleted = await expireBans();
    expect(deleted).toBeGreaterThanOrEqual(2);
    expect(await IpBan.findByPk(expired.id)).toBeNull();
    expect(await IpBan.findByPk(expiredNow.id)).toBeNull();
    expect(await IpBan.findByPk(future.id)).not.toBeNull();
    expect(await IpBan.findByPk(permanent.id)).not.toBeNull();
    expect(await IpBan.findByPk(permanentWithPast.id)).not.toBeNull();

    // Nothing left to expire: a second run deletes none of ours.
    await expireBans();
    expect(await IpBan.findByPk(future.id)).not.toBeNull();
  });

  it('lists an expired ban over the API until the expiry job deletes it', async () => {
    const ip = uniqueIpv4();
    const b = await IpBan.create({ ip, type: 0, expiry: nowSec() - 50 });
    const before = await api.get('/api/core/ipban', { ip });
    expect(before.body.data.map((d: any) => d.id)).toEqual([b.id]);
    await expireBans();
    const after = await api.get('/api/core/ipban', { ip });
    expect(after.body).toMatchObject({ data: [], count: 0 });
    const show = await api.get(`/api/core/ipban/${b.id}`);
    expect(show.status).toBe(404);
  });
});

describe('IPv4 octets with leading zeros (octal to some software, decimal to others): refused, never stored', () => {
  const spellings = ['127.000.000.004', '010.1.1.1', '10.1.1.01', '00.0.0.0', '::ffff:010.1.1.1', '1:2:3:4:5:6:1.2.3.04'];
  const INVALID_IP = 'The ip must be a valid IP address.';

  it.each(spellings)('%s: 422 on ban and whitelist create and update; the list filter (exact match) finds nothing', async (typed) => {
    expectError(await api.post('/api/core/ipban', { ip: typed, type: 1 }), 422, INVALID_IP);
    expectError(await api.post('/api/core/ipwhitelist', { ip: typed }), 422, INVALID_IP);
    const b = await ban({ ip: uniqueIpv4(), type: 1 });
    expectError(await api.put(`/api/core/ipban/${b.id}`, { ip: typed }), 422, INVALID_IP);
    expect((await IpBan.findByPk(b.id))!.ip).toBe(b.ip);
    const w = await whitelist({ ip: uniqueIpv4() });
    expectError(await api.put(`/api/core/ipwhitelist/${w.id}`, { ip: typed }), 422, INVALID_IP);
    expect(expectList(await api.get('/api/core/ipban', { ip: typed }))).toEqual([]);
    expect(expectList(await api.get('/api/core/ipwhitelist', { ip: typed }))).toEqual([]);
    expect(await IpBan.count({ where: { ip: typed } })).toBe(0);
    expect(await IpWhitelist.count({ where: { ip: typed } })).toBe(0);
  });

  it('still takes a zero octet and canonical addresses', async () => {
    const b = await ban({ ip: '0.0.0.0', type: 1, event_api: 0 });
    expect(b.ip).toBe('0.0.0.0');
    await api.del(`/api/core/ipban/${b.id}`);
    const ip = uniqueIpv4();
    expect(expectList(await api.get('/api/core/ipban', { ip }))).toEqual([]);
  });

  it('answers a list filter that is not a single address (a prefix, a range, a word) with an empty list, as an exact-match string filter', async () => {
    const b = await ban({ ip: '198.51.100.7', type: 1, event_api: 0 });
    const w = await whitelist({ ip: '198.51.100.8' });
    for (const ip of ['198.51.100', 'not-an-ip', '10.0.0.0/8', '198.51.100.%']) {
      const bans = await api.get('/api/core/ipban', { ip });
      expect(bans.body).toMatchObject({ status: 'success', data: [], count: 0 });
      const entries = await api.get('/api/core/ipwhitelist', { ip });
      expect(entries.body).toMatchObject({ status: 'success', data: [], count: 0 });
    }
    // The exact address still matches, in any spelling of it.
    expect(expectList(await api.get('/api/core/ipban', { ip: '::ffff:198.51.100.7' })).map((x: any) => x.id)).toEqual([b.id]);
    expect(expectList(await api.get('/api/core/ipwhitelist', { ip: ' 198.51.100.8 ' })).map((x: any) => x.id)).toEqual([w.id]);
    await api.del(`/api/core/ipban/${b.id}`);
    await api.del(`/api/core/ipwhitelist/${w.id}`);
  });
});
