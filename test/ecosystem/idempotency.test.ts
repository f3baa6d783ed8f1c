/**
 * Idempotency-Key on POSTs: the same key and request answers the first response without doing the
 * work again (also while the first is still running: the second waits for it), another request
 * with the key is a 422, keys are per token and last IDEMPOTENCY_TTL_SECONDS. Killing the process
 * mid-request: test/ecosystem/processes.test.ts.
 */
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { createToken } from '../../src/auth/tokens';
import { IdempotencyKey, IpBan, Webhook } from '../../src/db/models';
import { OTHER_REQUEST } from '../../src/http/idempotency';
import { useApi } from '../helpers/app';
import { encodeForm } from '../helpers/form';
import { expectError, expectSuccess } from '../helpers/envelope';
import { uniqueIpv4 } from '../core/support';

const api = useApi();
const post = (path: string, body: Record<string, unknown>, key: string, token = api.token) =>
  request(api.app).post(path).auth(token, 'x').set('Idempotency-Key', key).type('form').send(encodeForm(body));

describe('Idempotency-Key', () => {
  it('answers a repeated request with the first response, without doing the work again', async () => {
    const key = randomUUID();
    const ip = uniqueIpv4();
    const first = await post('/api/core/ipban', { ip, type: 1, reason: 'abuse' }, key);
    const created = expectSuccess(first, 'Successfully created new ban!');
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await post('/api/core/ipban', { ip, type: 1, reason: 'abuse' }, key);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await IpBan.count({ where: { ip } })).toBe(1);
    expect(created.ip).toBe(ip);
    // Without a key, the same request is new work.
    expectSuccess(await api.post('/api/core/ipban', { ip, type: 1, reason: 'abuse' }), 'Successfully created new ban!');
    expect(await IpBan.count({ where: { ip } })).toBe(2);
  });

  it('keeps the response encrypted at rest: a webhook\'s signing secret is in no stored row, and a replay still shows it', async () => {
    const key = randomUUID();
    const form = { url: 'https://hooks.example.com/helpdesk', events: ['ticket.created'] };
    const first = await post('/api/core/webhook', form, key);
    const created = expectSuccess(first, 'Successfully created new webhook!');
    try {
      expect(typeof created.secret).toBe('string');
      expect(created.secret.length).toBeGreaterThan(16);
      const rows = await IdempotencyKey.findAll({ where: { token_id: (await IdempotencyKey.findOne({ order: [['id', 'DESC']] }))!.token_id } });
      const row = rows.find((r) => r.response?.startsWith('v1:') && r.completed_at !== null && r.path === '/api/core/webhook')!;
      expect(row).toBeDefined();
      for (const r of rows) expect(r.response ?? '').not.toContain(created.secret);
      const again = await post('/api/core/webhook', form, key);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toEqual(first.body);
    } finally {
      // Later files of the jest worker share the database: an enabled webhook would take every
      // ticket.created of theirs (test/ticket/create-statements.test.ts counted its deliveries).
      await Webhook.destroy({ where: { id: created.id } });
    }
  });

  it('refuses the key with another body or path (422)', async () => {
    const key = randomUUID();
    const ip = uniqueIpv4();
    expectSuccess(await post('/api/core/ipban', { ip, type: 1 }, key), 'Successfully created new ban!');
    expectError(await post('/api/core/ipban', { ip, type: 0 }, key), 422, OTHER_REQUEST);
    expectError(await post('/api/core/spamrule', { text: 'x', type: 0 }, key), 422, OTHER_REQUEST);
    expect(await IpBan.count({ where: { ip } })).toBe(1);
  });

  it('is per token', async () => {
    const key = randomUUID();
    const other = (await createToken('idempotency test')).token;
    const a = uniqueIpv4();
    const b = uniqueIpv4();
    expectSuccess(await post('/api/core/ipban', { ip: a, type: 1 }, key), 'Successfully created new ban!');
    const theirs = await post('/api/core/ipban', { ip: b, type: 1 }, key, other);
    expectSuccess(theirs, 'Successfully created new ban!');
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
    expect(await IpBan.count({ where: { ip: [a, b] } })).toBe(2);
  });

  it('does not keep the answer to a request that changed nothing (it can be corrected and sent again)', async () => {
    const key = randomUUID();
    const ip = uniqueIpv4();
    expectError(await post('/api/core/ipban', { ip }, key), 422, 'The type field is required.');
    expectSuccess(await post('/api/core/ipban', { ip, type: 1 }, key), 'Successfully created new ban!');
    expect(await IpBan.count({ where: { ip } })).toBe(1);
  });

  it('makes a request sent twice at once run once: the second waits for the first answer', async () => {
    const key = randomUUID();
    const ip = uniqueIpv4();
    const [one, two] = await Promise.all([post('/api/core/ipban', { ip, type: 1 }, key), post('/api/core/ipban', { ip, type: 1 }, key)]);
    expect([one.status, two.status]).toEqual([200, 200]);
    expect(two.body).toEqual(one.body);
    expect([one.headers['idempotent-replayed'], two.headers['idempotent-replayed']].filter(Boolean)).toEqual(['true']);
    expect(await IpBan.count({ where: { ip } })).toBe(1);
  });

  it('lasts IDEMPOTENCY_TTL_SECONDS: an older key is new again', async () => {
    const key = randomUUID();
    const ip = uniqueIpv4();
    expectSuccess(await post('/api/core/ipban', { ip, type: 1 }, key), 'Successfully created new ban!');
    await IdempotencyKey.update({ created_at: 1 }, { where: { path: '/api/core/ipban' } });
    const again = await post('/api/core/ipban', { ip, type: 1 }, key);
    expectSuccess(again, 'Successfully created new ban!');
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    expect(await IpBan.count({ where: { ip } })).toBe(2);
  });

  it('applies to a POST that X-HTTP-Method-Override makes PUT or DELETE', async () => {
    const ip = uniqueIpv4();
    const ban = expectSuccess(await api.post('/api/core/ipban', { ip, type: 1 }), 'Successfully created new ban!');
    const override = (method: string, body: Record<string, unknown>, key: string) => post(`/api/core/ipban/${ban.id}`, body, key).set('X-HTTP-Method-Override', method);

    const putKey = randomUUID();
    const updated = await override('PUT', { reason: 'first' }, putKey);
    expectSuccess(updated, 'Successfully updated the ban!');
    expect(await IdempotencyKey.count({ where: { path: `/api/core/ipban/${ban.id}` } })).toBe(1);
    expectSuccess(await api.put(`/api/core/ipban/${ban.id}`, { reason: 'changed since' }), 'Successfully updated the ban!');
    const replayed = await override('PUT', { reason: 'first' }, putKey);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(replayed.body).toEqual(updated.body);
    expect((await IpBan.findByPk(ban.id))!.reason).toBe('changed since');
    // The same key with another request: another body, the same path as a DELETE, or a plain POST.
    expectError(await override('PUT', { reason: 'second' }, putKey), 422, OTHER_REQUEST);
    expectError(await override('DELETE', {}, putKey), 422, OTHER_REQUEST);
    expectError(await post('/api/core/ipban', { ip: uniqueIpv4(), type: 1 }, putKey), 422, OTHER_REQUEST);

    const deleteKey = randomUUID();
    const deleted = await override('DELETE', {}, deleteKey);
    expect(deleted.body).toEqual({ status: 'success', message: 'Successfully deleted the ban!', data: null });
    const again = await override('DELETE', {}, deleteKey);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect({ status: again.status, body: again.body }).toEqual({ status: 200, body: deleted.body });
    expect(await IpBan.count({ where: { ip } })).toBe(0);
  });

  it('checks the key and leaves other methods alone', async () => {
    expectError(await post('/api/core/ipban', { ip: uniqueIpv4(), type: 1 }, 'has spaces in it'), 400, 'The Idempotency-Key header must be 1 to 255 visible ASCII characters.');
    expectError(await post('/api/core/ipban', { ip: uniqueIpv4(), type: 1 }, 'x'.repeat(256)), 400, 'The Idempotency-Key header must be 1 to 255 visible ASCII characters.');
    const key = randomUUID();
    const res = await request(api.app).get('/api/core/brand/1').auth(api.token, 'x').set('Idempotency-Key', key);
    expectSuccess(res);
    expect(await IdempotencyKey.count({ where: { path: '/api/core/brand/1' } })).toBe(0);
  });
});
