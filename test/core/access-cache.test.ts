import request from 'supertest';
import { QueryTypes } from 'sequelize';
import { BAN_VERSION_KEY, ENTRY_TTL_MS } from '../../src/auth/accessCache';
import { createToken, revokeToken } from '../../src/auth/tokens';
import { IpBan } from '../../src/db/models';
import { config } from '../../src/config';
import { countQueries, sequelize } from '../../src/db/sequelize';
import { versionNames } from '../../src/db/versionedCache';
import { counterClient } from '../../src/redis/windowCounter';
import { useApi } from '../helpers/app';
import { redisCommandsDuring } from '../helpers/redisMonitor';
import { uniqueIpv4 } from './support';

/**
 * The token and ban look-ups are cached per process (auth/accessCache), and every change of
 * tokens, or of bans and whitelist entries, makes the caches of every process stale through a
 * version in Redis: a revoked token and a new ban apply to the very next request. A ban leaves
 * the cached tokens alone, and a token the cached ban answers.
 */
const api = useApi();
/** The tables of the token and ban checks that a request's statements read, in order. */
const accessTables = (queries: string[]) => queries.map((q) => q.match(/api_tokens|ip_bans|ip_whitelist/)?.[0]).filter((t) => t !== undefined);
const asClient = (ip: string, token: string) => request(api.app).get('/api/core/brand/1').auth(token, 'x').set('X-Forwarded-For', ip);

describe('the token and ban cache', () => {
  it('skips the token and ban queries once a token and address are known', async () => {
    const ip = uniqueIpv4();
    expect((await asClient(ip, api.token)).status).toBe(200);
    const { queries } = await countQueries(async () => expect((await asClient(ip, api.token)).status).toBe(200));
    expect(queries.some((q) => /api_tokens|ip_bans|ip_whitelist/.test(q))).toBe(false);
  });

  it('reads the cache versions once per request, with the rate-limit counts in one command: the ban check and the token check each read theirs once', async () => {
    const ip = uniqueIpv4();
    expect((await asClient(ip, api.token)).status).toBe(200);
    const { sent, inScript } = await redisCommandsDuring(async () => expect((await asClient(ip, api.token)).status).toBe(200));
    // One command from the web process (the script: the versions, then the count per address and
    // per token, this token being known), in which each version is read once.
    const prefix = config().queuePrefix;
    const names = versionNames();
    expect(names).toEqual(expect.arrayContaining(['token-version', 'ban-version', 'config-version', 'definitions-version']));
    const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const versionKeys = names.map((n) => `"${prefix}:${n}"`).join(' ');
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatch(new RegExp(`^"evalsha" "[0-9a-f]{40}" "${names.length + 2}" ${escape(versionKeys)} "${prefix}:ratelimit:ip:${escape(ip)}" "${prefix}:ratelimit:token:\\d+" "60" "${names.length}"$`));
    for (const n of names) expect(inScript.filter((line) => line.includes(`"${prefix}:${n}"`))).toEqual([`"GET" "${prefix}:${n}"`]);
  });

  it('refuses a revoked token at once', async () => {
    const { token, record } = await createToken('cache-revoke');
    const ip = uniqueIpv4();
    expect((await asClient(ip, token)).status).toBe(200);
    expect((await asClient(ip, token)).status).toBe(200); // now cached
    await revokeToken(String(record.id));
    const res = await asClient(ip, token);
    expect(res.status).toBe(401);
    expect(res.body.message).toBe('The API token is not valid.');
  });

  it('applies a ban created through the API at once', async () => {
    const ip = uniqueIpv4();
    expect((await asClient(ip, api.token)).status).toBe(200);
    expect((await asClient(ip, api.token)).status).toBe(200); // "not banned" is cached
    expect((await api.post('/api/core/ipban', { ip, type: 1 })).status).toBe(200);
    expect((await asClient(ip, api.token)).status).toBe(403);
  });

  it('keeps the cached tokens when a ban changes, and the cached ban answers when a token does', async () => {
    const ip = uniqueIpv4();
    expect((await asClient(ip, api.token)).status).toBe(200);
    // A ban of another address: the next request of this one checks its ban again, not its token.
    const ban = await api.post('/api/core/ipban', { ip: uniqueIpv4(), type: 1 });
    expect(ban.status).toBe(200);
    const afterBan = await countQueries(async () => expect((await asClient(ip, api.token)).status).toBe(200));
    expect(accessTables(afterBan.queries)).toEqual(['ip_bans']);
    // A new token: the next request checks its token again (the cache was emptied), not its ban.
    await createToken('cache-other');
    const afterToken = await countQueries(async () => expect((await asClient(ip, api.token)).status).toBe(200));
    expect(accessTables(afterToken.queries)).toEqual(['api_tokens']);
    expect((await api.del(`/api/core/ipban/${ban.body.data.id}`)).status).toBe(200);
  });

  it('applies a ban changed to event_api=1 and lifts a deleted one at once', async () => {
    const ip = uniqueIpv4();
    const created = await api.post('/api/core/ipban', { ip, type: 1, event_api: 0 });
    const id = created.body.data.id;
    expect((await asClient(ip, api.token)).status).toBe(200);
    expect((await asClient(ip, api.token)).status).toBe(200);
    expect((await api.put(`/api/core/ipban/${id}`, { event_api: 1 })).status).toBe(200);
    expect((await asClient(ip, api.token)).status).toBe(403);
    expect((await api.del(`/api/core/ipban/${id}`)).status).toBe(200);
    expect((await asClient(ip, api.token)).status).toBe(200);
  });

  it('applies a ban written by another process at once: its bump of the shared version reaches this one', async () => {
    // Another web process (or the CLI) writes through its own models, and its hook bumps the
    // version in Redis. Here: the row written by hand (no hook in this process), then the bump.
    const ip = uniqueIpv4();
    expect((await asClient(ip, api.token)).status).toBe(200);
    expect((await asClient(ip, api.token)).status).toBe(200);
    await sequelize().query('INSERT INTO ip_bans (ip, type, event_api, event_user, event_operator, created_at, updated_at) VALUES (?, 1, 1, 0, 0, 0, 0)', { replacements: [ip], type: QueryTypes.INSERT });
    await counterClient().incr(`${config().queuePrefix}:${BAN_VERSION_KEY}`);
    expect((await asClient(ip, api.token)).status).toBe(403);
    await IpBan.destroy({ where: { ip } });
    expect((await asClient(ip, api.token)).status).toBe(200);
  });

  it('keeps entries at most ENTRY_TTL_MS (a change by hand without a bump)', () => {
    expect(ENTRY_TTL_MS).toBeLessThanOrEqual(10_000);
  });
});
