/**
 * Operations: /healthz and /readyz without a token (readiness fails while a migration is pending),
 * Prometheus metrics of the web process (by route pattern, never a raw id; behind METRICS_TOKEN on
 * the web port, open on METRICS_PORT) and of workers (jobs by queue and outcome, deliveries).
 * Readiness while draining and without Redis: test/ecosystem/processes.test.ts.
 */
import './opsEnv';
import request from 'supertest';
import { config } from '../../src/config';
import { QueryTypes } from 'sequelize';
import { sequelize } from '../../src/db/sequelize';
import { registry, startMetricsServer } from '../../src/ops/metrics';
import { routePattern } from '../../src/http/routePattern';
import { allRoutes } from '../../src/http/routes';
import { createWorker } from '../../src/queue/runWorker';
import { queue } from '../../src/queue/producer';
import { QUEUES } from '../../src/queue/names';
import { webhooksSpec } from '../../src/wiring';
import { Webhook } from '../../src/db/models';
import { unique, useApi } from '../helpers/app';
import { expectError, expectSuccess } from '../helpers/envelope';
import { startReceiver } from '../helpers/receiver';
import { waitForProgress } from '../helpers/smtp';

const api = useApi();
const scrape = () => request(api.app).get('/metrics').set('Authorization', 'Bearer metrics-token-for-the-tests');
const sample = (text: string, name: string, labels: Record<string, string>) => {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && wanted.every((w) => l.includes(w)));
  return line ? Number(line.split(' ').pop()) : 0;
};

describe('health', () => {
  it('/healthz: alive, without a token', async () => {
    expect(expectSuccess(await request(api.app).get('/healthz'))).toEqual({ status: 'alive' });
  });

  it('/readyz: MariaDB, Redis and migrations, without a token; 503 with the reason while a migration is pending', async () => {
    const ready = await request(api.app).get('/readyz');
    expect(expectSuccess(ready)).toEqual({ database: 'ok', redis: 'ok', migrations: 'ok', search: 'ok' });
    expect(ready.headers['cache-control']).toBe('no-store');
    await sequelize().query("DELETE FROM migrations WHERE name = '012_ecosystem'", { type: QueryTypes.DELETE });
    try {
      expectError(await request(api.app).get('/readyz'), 503, 'Not ready: migrations: 1 pending (012_ecosystem).');
    } finally {
      await sequelize().query("INSERT INTO migrations (name) VALUES ('012_ecosystem')", { type: QueryTypes.INSERT });
    }
    expect((await request(api.app).get('/readyz')).status).toBe(200);
  });
});

describe('metrics of the web process', () => {
  it('are behind METRICS_TOKEN on the web port', async () => {
    expectError(await request(api.app).get('/metrics'), 401, 'The metrics need Authorization: Bearer <METRICS_TOKEN>.');
    expectError(await request(api.app).get('/metrics').set('Authorization', 'Bearer wrong-token-of-some-length'), 401, 'The metrics need Authorization: Bearer <METRICS_TOKEN>.');
    // The API token is not the metrics token.
    expect((await request(api.app).get('/metrics').auth(api.token, 'x')).status).toBe(401);
    const res = await scrape();
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.text).toContain('# TYPE helpdesk_http_requests_total counter');
    expect(res.text).toContain('# TYPE helpdesk_http_request_duration_seconds histogram');
    expect(res.text).toContain('helpdesk_process_cpu_user_seconds_total');
  });

  it('count requests by route pattern and status, never by raw path', async () => {
    const before = (await scrape()).text;
    const labels = { method: 'GET', route: '/api/core/ipban/:id', status: '404' };
    await api.get('/api/core/ipban/4294967295');
    await api.get('/api/core/ipban/4294967294');
    await request(api.app).get('/api/core/ipban/12345678/no/such/thing').auth(api.token, 'x');
    const after = (await scrape()).text;
    expect(sample(after, 'helpdesk_http_requests_total', labels) - sample(before, 'helpdesk_http_requests_total', labels)).toBe(2);
    expect(sample(after, 'helpdesk_http_request_duration_seconds_count', labels) - sample(before, 'helpdesk_http_request_duration_seconds_count', labels)).toBe(2);
    expect(after).not.toMatch(/4294967295|4294967294|12345678/);
    expect(sample(after, 'helpdesk_http_requests_total', { route: 'unmatched', status: '404' })).toBeGreaterThan(0);
  });

  it('name route patterns from the route records', () => {
    expect(routePattern('/api/user/user/123')).toBe('/api/user/user/:id');
    expect(routePattern('/api/user/user')).toBe('/api/user/user');
    expect(routePattern('/api/selfservice/article/search')).toBe('/api/selfservice/article/search');
    expect(routePattern('/api/core/webhook/5/delivery/7/redeliver')).toBe('/api/core/webhook/:webhook/delivery/:id/redeliver');
    expect(routePattern('/api/ticket/department/3/email/9')).toBe('/api/ticket/department/:department/email/:id');
    expect(routePattern('/api/nothing/here')).toBe('unmatched');
    expect(routePattern('/docs/swagger-ui.css')).toBe('/docs/*');
    expect(routePattern('/account/verify/secret-token')).toBe('/account/verify/:token');
    expect(routePattern('/wp-login.php')).toBe('unmatched');
  });

  it('name every route of the API by its own pattern (each is found among the routes of its area and length)', () => {
    const paths = [...new Set(allRoutes().map((r) => r.path))].filter((p) => p.startsWith('/api/'));
    expect(paths.length).toBeGreaterThan(100);
    // Digits for the parameters: no static segment is all digits, so no other pattern can match first.
    for (const path of paths) expect(routePattern(path.replace(/:[^/]+/g, '7'))).toBe(path);
    expect(routePattern('/api/user/user/7/extra')).toBe('unmatched');
  });

  it('are served without a token on METRICS_PORT', async () => {
    const server = await startMetricsServer();
    try {
      const res = await fetch(`http://127.0.0.1:${config().metrics.port}/metrics`);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('helpdesk_http_requests_total');
      expect((await fetch(`http://127.0.0.1:${config().metrics.port}/other`)).status).toBe(404);
    } finally {
      server?.close();
    }
  });
});

describe('metrics of workers', () => {
  it('count jobs by queue and outcome, and webhook deliveries; mail and mailbox counters exist', async () => {
    // The jest worker's database and queues are shared with the files it ran before: their
    // webhooks (which may subscribe to every event) and their jobs still queued (retries, deliveries
    // to webhooks since deleted) are not this test's to count.
    await Webhook.update({ enabled: 0 }, { where: {} });
    await queue(QUEUES.webhooks).obliterate({ force: true });
    const receiver = await startReceiver();
    const worker = await createWorker(webhooksSpec());
    try {
      const hook = expectSuccess(await api.post('/api/core/webhook', { url: `${receiver.url}?${unique('m')}`, events: ['organisation.created'] }), 'Successfully created new webhook!');
      receiver.answerNext(hook.url, 500);
      const before = await registry.metrics();
      await api.post('/api/user/organisation', { name: unique('Org ') });
      // Bounded by progress (deliveries received, jobs counted), not by a time.
      const completed = (text: string) => sample(text, 'helpdesk_jobs_total', { queue: 'webhooks', outcome: 'completed' });
      let after = before;
      const progress = async () => {
        after = await registry.metrics();
        return { deliveries: receiver.at(hook.url).length, completed: completed(after) };
      };
      await waitForProgress(progress, (p) => p.deliveries === 2 && p.completed > completed(before), 'the delivery, its retry and the completed job counted');
      const delta = (name: string, labels: Record<string, string>) => sample(after, name, labels) - sample(before, name, labels);
      expect(delta('helpdesk_jobs_total', { queue: 'webhooks', job: 'webhook.deliver', outcome: 'retry' })).toBe(1);
      expect(delta('helpdesk_jobs_total', { queue: 'webhooks', job: 'webhook.deliver', outcome: 'completed' })).toBe(1);
      expect(delta('helpdesk_webhook_deliveries_total', { outcome: 'retry' })).toBe(1);
      expect(delta('helpdesk_webhook_deliveries_total', { outcome: 'succeeded' })).toBe(1);
      expect(delta('helpdesk_job_duration_seconds_count', { queue: 'webhooks', job: 'webhook.deliver' })).toBe(2);
      expect(after).toContain('# TYPE helpdesk_mails_total counter');
      expect(after).toContain('# TYPE helpdesk_mailbox_polls_total counter');
      await Webhook.destroy({ where: { id: hook.id } });
    } finally {
      await worker.close();
      await receiver.close();
    }
  });
});
