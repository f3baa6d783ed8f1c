import net from 'node:net';
import request from 'supertest';
import { QueryTypes } from 'sequelize';
import { bumpAccessVersion, ENTRY_TTL_MS } from '../../src/auth/accessCache';
import { createToken, revokeToken } from '../../src/auth/tokens';
import { IpBan } from '../../src/db/models';
import { config } from '../../src/config';
import { countQueries, sequelize } from '../../src/db/sequelize';
import { useApi } from '../helpers/app';
import { uniqueIpv4 } from './support';

/**
 * The token and ban look-ups are cached per process (auth/accessCache), and every change of
 * tokens, bans and whitelist entries makes the caches of every process stale through a version
 * in Redis: a revoked token and a new ban apply to the very next request.
 */
const api = useApi();
const asClient = (ip: string, token: string) => request(api.app).get('/api/core/brand/1').auth(token, 'x').set('X-Forwarded-For', ip);

describe('the token and ban cache', () => {
  it('skips the token and ban queries once a token and address are known', async () => {
    const ip = uniqueIpv4();
    expect((await asClient(ip, api.token)).status).toBe(200);
    const { queries } = await countQueries(async () => expect((await asClient(ip, api.token)).status).toBe(200));
    expect(queries.some((q) => /api_tokens|ip_bans|ip_whitelist/.test(q))).toBe(false);
  });

  it('reads the access version once per request, with the rate-limit counts in one command: the ban check and the token check share it', async () => {
    const ip = uniqueIpv4();
    expect((await asClient(ip, api.token)).status).toBe(200);
    // MONITOR sees every command Redis runs; the key carries this worker's QUEUE_PREFIX. Over a
    // plain socket: ioredis's monitor() can mistake a MONITOR line for a reply under load.
    const url = new URL(config().redisUrl);
    const monitor = net.connect(Number(url.port || 6379), url.hostname);
    let seen = '';
    const monitoring = new Promise<void>((resolve, reject) => {
      monitor.on('data', (d) => { seen += d.toString('utf8'); if (seen.startsWith('+OK\r\n')) resolve(); });
      monitor.once('error', reject);
    });
    monitor.write('MONITOR\r\n');
    const key = `${config().queuePrefix}:access-version`;
    try {
      await monitoring;
      expect((await asClient(ip, api.token)).status).toBe(200);
      await new Promise((r) => setTimeout(r, 100)); // MONITOR's lines arrive after the replies
    } finally {
      monitor.destroy();
    }
    // A line of MONITOR: `<time> [<db> <client address>|lua] "command" "args"...`.
    const lines = seen.split('\r\n').filter((line) => line.includes(`"${config().queuePrefix}:`));
    const strip = (line: string) => line.replace(/^.*?\] /, '');
    const sent = lines.filter((line) => !/\[\d+ lua\]/.test(line)).map(strip);
    const inScript = lines.filter((line) => /\[\d+ lua\]/.test(line)).map(strip);
    // One command from the web process (the script: the version, then the count per address and
    // per token, this token being known), in which the version is read once.
    const prefix = config().queuePrefix;
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatch(new RegExp(`^"evalsha" "[0-9a-f]{40}" "3" "${key}" "${prefix}:ratelimit:ip:${ip.replace(/\./g, '\\.')}" "${prefix}:ratelimit:token:\\d+" "60"$`));
    expect(inScript.filter((line) => line.includes(`"${key}"`))).toEqual([`"GET" "${key}"`]);
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
    await bumpAccessVersion();
    expect((await asClient(ip, api.token)).status).toBe(403);
    await IpBan.destroy({ where: { ip } });
    expect((await asClient(ip, api.token)).status).toBe(200);
  });

  it('keeps entries at most ENTRY_TTL_MS (a change by hand without a bump)', () => {
    expect(ENTRY_TTL_MS).toBeLessThanOrEqual(10_000);
  });
});
