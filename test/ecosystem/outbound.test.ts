/**
 * Outbound targets (src/net/outbound.ts): webhooks refuse internal addresses on write (422 saying
 * why) and again at delivery, on every address a name resolves to; a failed delivery keeps status
 * and timing, not the receiver's body; mail servers may be internal but never a metadata address.
 */
import './outboundStrictEnv';
import { lookup } from 'node:dns/promises';
import { hostname } from 'node:os';
import { Webhook } from '../../src/db/models';
import { transaction } from '../../src/db/transaction';
import { encryptSecret } from '../../src/crypto/secrets';
import { DomainEvent } from '../../src/db/models';
import { addressRefusal, foreignText, hostRefusal } from '../../src/net/outbound';
import { createWorker } from '../../src/queue/runWorker';
import { webhooksSpec } from '../../src/wiring';
import { WEBHOOK_SECRET_PURPOSE } from '../../src/webhooks/signing';
import { queueDelivery } from '../../src/webhooks/subscriber';
import { unique, useApi } from '../helpers/app';
import { expectError, expectSuccess } from '../helpers/envelope';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { waitFor } from '../helpers/smtp';

const created: number[] = [];
// Before useApi's afterAll closes the database (top-level hooks run in the order they were added).
afterAll(async () => {
  await Webhook.destroy({ where: { id: created } });
});
const api = useApi();
let worker: Awaited<ReturnType<typeof createWorker>>;
let receiver: Receiver;

beforeAll(async () => {
  worker = await createWorker(webhooksSpec());
  receiver = await startReceiver();
});
afterAll(async () => {
  await worker.close();
  await receiver.close();
});

const REFUSED: Array<[string, RegExp]> = [
  ['http://127.0.0.1:8080/x', /127\.0\.0\.1 is a loopback address/],
  ['http://[::1]/x', /::1 is a loopback address/],
  ['http://0.0.0.0/x', /0\.0\.0\.0 is an unspecified address/],
  ['http://[::]/x', /:: is an unspecified address/],
  ['http://localhost:3000/x', /localhost \(127\.0\.0\.1\) is a loopback address/],
  ['http://api.localhost/x', /loopback/],
  ['http://2130706433/x', /127\.0\.0\.1 is a loopback address/],
  ['http://0x7f.1/x', /127\.0\.0\.1 is a loopback address/],
  ['http://017700000001/x', /127\.0\.0\.1 is a loopback address/],
  ['http://169.254.169.254/latest/meta-data', /169\.254\.169\.254 is a cloud metadata/],
  ['http://[fd00:ec2::254]/x', /cloud metadata/],
  ['http://10.1.2.3/x', /a private address/],
  ['http://172.16.0.1/x', /a private address/],
  ['http://192.168.1.1/x', /a private address/],
  ['http://[fe80::1]/x', /a link-local address/],
  ['http://[fc00::1]/x', /a unique-local address/],
  ['http://[fec0::1]/x', /fec0::1 is a site-local address/],
  ['http://[feff:ffff::1]/x', /a site-local address/],
  ['http://224.0.0.1/x', /a multicast address/],
  ['http://[ff02::1]/x', /a multicast address/],
  ['http://[::ffff:127.0.0.1]/x', /loopback/],
  ['http://[::ffff:169.254.169.254]/x', /cloud metadata/],
  ['http://[64:ff9b::a00:1]/x', /a private address/],
  // RFC 8215's local-use NAT64 prefix: its /96 form by the IPv4 address, the rest of the /48 refused.
  ['http://[64:ff9b:1::7f00:1]/x', /64:ff9b:1::7f00:1 is a loopback address/],
  ['http://[64:ff9b:1:7f00:1::]/x', /a local-use NAT64 address/],
  ['http://192.0.2.1/x', /a reserved address/],
  ['http://198.51.100.7/x', /a reserved address/],
  ['http://203.0.113.9/x', /a reserved address/],
  // IPv4-translated (::ffff:0:0/96) and 6to4 (2002::/16) carry an IPv4 address too; Teredo hides it.
  ['http://[::ffff:0:127.0.0.1]/x', /::ffff:0:7f00:1 is a loopback address/],
  ['http://[::ffff:0:a00:1]/x', /a private address/],
  ['http://[2002:7f00:1::]/x', /2002:7f00:1:: is a loopback address/],
  ['http://[2002:7f00:1:abcd::1]/x', /loopback/],
  ['http://[2002:c0a8:101::]/x', /a private address/],
  ['http://[2002:a9fe:a9fe::]/x', /cloud metadata/],
  ['http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/x', /a Teredo tunnel address/],
  ['http://[2001::1]/x', /a Teredo tunnel address/],
];

describe('webhook targets', () => {
  it.each(REFUSED)('refuses %s on create with the reason', async (url, reason) => {
    const res = await api.post('/api/core/webhook', { url, events: ['*'] });
    expectError(res, 422, reason);
    expect(res.body.message).toMatch(/^The url is not allowed: /);
  });

  it('refuses an internal target on update and keeps the old one', async () => {
    const hook = expectSuccess(await api.post('/api/core/webhook', { url: 'https://93.184.215.14/hook', events: ['*'] }), 'Successfully created new webhook!');
    created.push(hook.id);
    expectError(await api.put(`/api/core/webhook/${hook.id}`, { url: 'http://[::ffff:7f00:1]/x' }), 422, /loopback/);
    expect((await Webhook.findByPk(hook.id))!.url).toBe('https://93.184.215.14/hook');
  });

  it('refuses a name that resolves to an internal address on create', async () => {
    const name = hostname();
    const resolved = await lookup(name, { all: true });
    expect(resolved.some((a) => /^127\.|^::1$/.test(a.address))).toBe(true); // precondition: this machine's name is loopback
    expectError(await api.post('/api/core/webhook', { url: `http://${name}:9/x`, events: ['*'] }), 422, new RegExp(`${name} \\(127\\.\\d+\\.\\d+\\.\\d+\\) is a loopback address`));
  });

  it('refuses an OAuth2 token endpoint by a name that resolves to an internal address, as a webhook\'s', async () => {
    const name = hostname();
    const refusal = new RegExp(`^The oauth token url is not allowed: ${name} \\(127\\.\\d+\\.\\d+\\.\\d+\\) is a loopback address`);
    const before = await api.get('/api/core/brand/1');
    expectError(await api.put('/api/core/brand/1', { oauth_token_url: `http://${name}:9/token` }), 422, refusal);
    expectError(await api.post('/api/core/brand', { name: unique('Brand'), oauth_token_url: `http://${name}:9/token` }), 422, refusal);
    expect((await api.get('/api/core/brand/1')).body.data).toEqual(before.body.data);
  });

  it('checks again at delivery: a stored internal target gets nothing and the log says why', async () => {
    // As if the name had resolved to a public address when the webhook was saved (DNS rebinding).
    for (const url of [`${receiver.url}?${unique('r')}`, `http://${hostname()}:${new URL(receiver.url).port}/hook?${unique('n')}`]) {
      const hook = await Webhook.create({ url, events: '["*"]', enabled: 1, description: null, secret: encryptSecret('whsec_x', WEBHOOK_SECRET_PURPOSE) });
      created.push(hook.id);
      const delivery = await transaction(async (t) => {
        const event = await DomainEvent.create({ name: 'user.created', payload: '{}', created_at: Math.floor(Date.now() / 1000) } as any, { transaction: t });
        return queueDelivery(hook.id, event, t);
      });
      const failed = await waitFor(async () => {
        await delivery.reload();
        return delivery.attempts >= 1 ? delivery : null;
      }, 15000, 'the attempt');
      expect(failed.error).toMatch(/^Not delivered: .* is a loopback address; list it in OUTBOUND_ALLOW_HOSTS/);
      expect(failed.response_code).toBeNull();
      expect(receiver.at(url)).toHaveLength(0);
    }
  });
});

describe('the address policy', () => {
  it('lets mail servers be internal but never metadata', () => {
    expect(hostRefusal('127.0.0.1', 'mail-server')).toBeNull();
    expect(hostRefusal('10.0.0.5', 'mail-server')).toBeNull();
    expect(hostRefusal('169.254.169.254', 'mail-server')).toMatch(/cloud metadata/);
    expect(hostRefusal('2852039166', 'mail-server')).toMatch(/169\.254\.169\.254/);
    expect(addressRefusal('smtp.example.com', '::ffff:169.254.169.254', 'mail-server')).toMatch(/cloud metadata/);
    expect(hostRefusal('93.184.215.14', 'webhook')).toBeNull();
  });

  it('judges IPv6 forms that carry an IPv4 address by that address', () => {
    // Public IPv4 addresses behind them stay reachable (93.184.215.14).
    expect(hostRefusal('::ffff:0:93.184.215.14', 'webhook')).toBeNull();
    expect(hostRefusal('2002:5db8:d70e::', 'webhook')).toBeNull();
    expect(hostRefusal('[2002:5db8:d70e:1::1]', 'webhook')).toBeNull();
    expect(hostRefusal('2001:4860:4860::8888', 'webhook')).toBeNull(); // 2001:4860::/32 is not Teredo
    // Internal ones are refused, metadata ones whatever the use; mail servers may be internal.
    expect(hostRefusal('2002:a00:1::', 'webhook')).toBe('2002:a00:1:: is a private address; list it in OUTBOUND_ALLOW_HOSTS to allow it.');
    expect(hostRefusal('::ffff:0:127.0.0.1', 'oauth-token')).toMatch(/is a loopback address/);
    expect(hostRefusal('2002:7f00:1::', 'mail-server')).toBeNull();
    expect(addressRefusal('smtp.example.com', '2002:a9fe:a9fe::', 'mail-server')).toMatch(/cloud metadata/);
    expect(addressRefusal('smtp.example.com', '::ffff:0:169.254.169.254', 'mail-server')).toMatch(/cloud metadata/);
    // A name resolving to one of them is refused like the literal (rebinding through 6to4).
    expect(addressRefusal('hooks.example.com', '2002:7f00:1::', 'webhook')).toBe(
      'hooks.example.com (2002:7f00:1::) is a loopback address; list it in OUTBOUND_ALLOW_HOSTS to allow it.',
    );
    // The plain IPv6 loopback and unspecified addresses keep their own words.
    expect(hostRefusal('::1', 'webhook')).toMatch(/^::1 is a loopback address/);
    expect(hostRefusal('::', 'webhook')).toMatch(/^:: is an unspecified address/);
  });

  it('keeps a foreign server answer to a short first line', () => {
    expect(foreignText('HTTP/1.1 400 Bad Request\r\nServer: internal-admin 3.1\r\n\r\nsecret')).toBe('HTTP/1.1 400 Bad Request');
    expect(foreignText('x'.repeat(500))).toHaveLength(121);
  });

  it('refuses a metadata address as a mailbox server or brand SMTP host', async () => {
    const dept = expectSuccess(await api.post('/api/ticket/department', { name: unique('Dept ') }), 'Successfully created new department!');
    expectError(await api.post(`/api/ticket/department/${dept.id}/email`, {
      address: `${unique('m')}@example.com`, type: 1, server: '169.254.169.254', username: 'u', password: 'p',
    }), 422, /^The server is not allowed: 169\.254\.169\.254 is a cloud metadata/);
    const ok = await api.post(`/api/ticket/department/${dept.id}/email`, { address: `${unique('m')}@example.com`, type: 1, server: '127.0.0.1', username: 'u', password: 'p' });
    expect(ok.status).not.toBe(422);
    expectError(await api.put('/api/core/brand/1', { smtp_host: '169.254.169.254' }), 422, /^The smtp host is not allowed: /);
  });
});
