import { createServer, type Server } from 'node:http';
import { timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import client from 'prom-client';
import { config } from '../config';
import { logger } from '../logger';
import { withPortSetting } from '../lib/exitOnStartupError';

/**
 * Prometheus metrics (prom-client) of this process: the web process counts requests by route
 * pattern (`/api/user/user/:id`, never a raw id) and status with their latency; workers count jobs
 * by queue and outcome, mails, webhook deliveries and mailbox polls. Each process has its own
 * registry, scraped from it alone (docs/operations.md, Metrics); a web process's node:cluster
 * workers are summed by its primary (clusterMetrics).
 */
export const registry = new client.Registry();
client.collectDefaultMetrics({ register: registry, prefix: 'helpdesk_' });

export const httpRequests = new client.Counter({
  name: 'helpdesk_http_requests_total', help: 'HTTP requests answered, by method, route pattern and status', labelNames: ['method', 'route', 'status'], registers: [registry],
});
export const httpDuration = new client.Histogram({
  name: 'helpdesk_http_request_duration_seconds', help: 'Time to answer an HTTP request, by method, route pattern and status',
  labelNames: ['method', 'route', 'status'], buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10], registers: [registry],
});
export const rateLimited = new client.Counter({
  name: 'helpdesk_rate_limited_total', help: 'Requests refused with 429 by the rate limits, by limit (token or ip)', labelNames: ['limit'], registers: [registry],
});
export const idempotentReplays = new client.Counter({
  name: 'helpdesk_idempotent_replays_total', help: 'POSTs answered with the stored response of an earlier request with the same Idempotency-Key', registers: [registry],
});
export const jobsTotal = new client.Counter({
  name: 'helpdesk_jobs_total', help: 'Jobs run by workers, by queue, job name and outcome (completed, retry, failed)', labelNames: ['queue', 'job', 'outcome'], registers: [registry],
});
export const jobDuration = new client.Histogram({
  name: 'helpdesk_job_duration_seconds', help: 'Time a job attempt took, by queue and job name', labelNames: ['queue', 'job'],
  buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60], registers: [registry],
});
export const mailsTotal = new client.Counter({
  name: 'helpdesk_mails_total', help: 'Mails by outcome: sent, retry (an attempt failed), failed (for good), skipped (nothing to send any more)', labelNames: ['outcome'], registers: [registry],
});
export const webhookDeliveries = new client.Counter({
  name: 'helpdesk_webhook_deliveries_total', help: 'Webhook delivery attempts by outcome: succeeded, retry, failed (for good), skipped', labelNames: ['outcome'], registers: [registry],
});
export const mailboxPolls = new client.Counter({
  name: 'helpdesk_mailbox_polls_total', help: 'Polls of department mailboxes by outcome (ok, error, stopped: the mailbox changed or deleted during the poll)', labelNames: ['outcome'], registers: [registry],
});
export const mailsIngested = new client.Counter({
  name: 'helpdesk_mailbox_mails_total', help: 'Mails fetched from department mailboxes by decision (new_ticket, reply, duplicate, loop, bounce, spam, rejected, error)',
  labelNames: ['decision'], registers: [registry],
});


const sameToken = (given: string, expected: string) => {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
};

/**
 * `GET /metrics` on the web port: only with `Authorization: Bearer <METRICS_TOKEN>`; without a
 * METRICS_TOKEN the path does not exist there (METRICS_PORT serves them instead).
 */
export const metricsEndpoint: RequestHandler = async (req, res, next) => {
  const token = config().metrics.token;
  if (!token) return next();
  const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
  if (!m || !sameToken(m[1], token)) {
    res.setHeader('WWW-Authenticate', 'Bearer realm="metrics"');
    res.status(401).json({ status: 'error', message: 'The metrics need Authorization: Bearer <METRICS_TOKEN>.', data: null });
    return undefined;
  }
  res.setHeader('Content-Type', registry.contentType);
  res.setHeader('Cache-Control', 'no-store');
  res.send(await registry.metrics());
  return undefined;
};

/**
 * Serves `/metrics` without authentication on METRICS_HOST:METRICS_PORT (a port of its own, for a
 * scraper on the host or the private network), or nothing when METRICS_PORT is 0.
 */
/**
 * WEB_CONCURRENCY > 1: the node:cluster primary serves METRICS_PORT with the sum of its web
 * workers' registries (prom-client's AggregatorRegistry asks each over IPC at every scrape), so
 * a scrape counts every request, not those of whichever worker the shared port handed it to.
 * `clusterMetrics()` in the primary; `answerClusterMetrics()` in each worker.
 */
export function clusterMetrics(): () => Promise<string> {
  const aggregator = new client.AggregatorRegistry();
  return () => aggregator.clusterMetrics();
}

export function answerClusterMetrics(): void {
  client.AggregatorRegistry.setRegistries([registry]);
  // The constructor installs the worker's answer to the primary's requests.
  void new client.AggregatorRegistry();
}

export async function startMetricsServer(read: () => Promise<string> = () => registry.metrics()): Promise<Server | undefined> {
  const { port, host } = config().metrics;
  if (!port) return undefined;
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('Not found: GET /metrics\n');
      return;
    }
    read().then(
      (text) => res.writeHead(200, { 'Content-Type': registry.contentType, 'Cache-Control': 'no-store' }).end(text),
      (err) => res.writeHead(500, { 'Content-Type': 'text/plain' }).end(`${(err as Error).message}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    // A port in use is METRICS_PORT's, not PORT's: the start-up line names it.
    server.once('error', (err) => reject(withPortSetting(err, 'METRICS_PORT')));
    server.listen(port, host, () => resolve());
  });
  server.unref();
  logger.info({ port, host }, 'metrics served at /metrics');
  return server;
}
