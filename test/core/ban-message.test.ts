/**
 * The 403 of a banned address keeps its first sentence (clients match it) and says until when the
 * ban lasts and how an administrator lifts it.
 */
import request from 'supertest';
import { bannedMessage } from '../../src/http/bans';
import { useApi, nowSec } from '../helpers/app';
import { expectError, expectSuccess } from '../helpers/envelope';
import { uniqueIpv4 } from './support';

const api = useApi();
const FIRST = 'Your IP address is banned from using the API.';
const iso = (t: number) => new Date(t * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
const lift = (ip: string) => `An administrator can lift it: \`npm run ban -- delete ${ip}\` on the server, or DELETE /api/core/ipban/{id}.`;
const ban = async (form: Record<string, unknown>) => expectSuccess(await api.post('/api/core/ipban', form), 'Successfully created new ban!');

describe('the 403 of a banned address', () => {
  it('says when a temporary ban ends, and how to lift it, in the error envelope', async () => {
    const ip = uniqueIpv4();
    const expiry = nowSec() + 3600;
    await ban({ ip, type: 0, expiry_time: expiry });
    const res = await request(api.app).get('/api/core/brand/1').auth(api.token, 'x').set('X-Forwarded-For', ip);
    expectError(res, 403, `${FIRST} The ban ends at ${iso(expiry)} (in 60 minutes). ${lift(ip)}`);
  });

  it('says a permanent ban is permanent; the latest end wins among several bans', async () => {
    const ip = uniqueIpv4();
    await ban({ ip, type: 0, expiry_time: nowSec() + 600 });
    const later = nowSec() + 3 * 86400;
    await ban({ ip, type: 0, expiry_time: later });
    const get = () => request(api.app).get('/api/core/brand/1').auth(api.token, 'x').set('X-Forwarded-For', ip);
    expectError(await get(), 403, `${FIRST} The ban ends at ${iso(later)} (in 3 days). ${lift(ip)}`);
    await ban({ ip, type: 1 });
    expectError(await get(), 403, `${FIRST} The ban is permanent. ${lift(ip)}`);
  });

  it('is the same on the admin pages, which the ban blocks too', async () => {
    const ip = uniqueIpv4();
    await ban({ ip, type: 1 });
    const res = await request(api.app).get('/admin/mail').auth(api.token, 'x').set('X-Forwarded-For', ip);
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ status: 'error', message: `${FIRST} The ban is permanent. ${lift(ip)}`, data: null });
  });

  it('rounds the time left up, in seconds, minutes, hours or days', () => {
    const at = 1_700_000_000;
    const left = (s: number) => /\(in ([^)]+)\)/.exec(bannedMessage('192.0.2.1', at + s, at))![1];
    expect([1, 59, 60, 61, 3600, 7199, 7200, 86400, 2 * 86400 + 1].map(left))
      .toEqual(['1 second', '59 seconds', '1 minute', '2 minutes', '60 minutes', '120 minutes', '2 hours', '24 hours', '3 days']);
  });
});
