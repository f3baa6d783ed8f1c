import type { Job } from 'bullmq';
import { config } from '../config';
import { decryptSecret } from '../crypto/secrets';
import { DomainEvent, Webhook, WebhookDelivery } from '../db/models';
import { now } from '../db/entity';
import { Joi } from '../lib/validation';
import { OutboundRefusedError, postChecked } from '../net/outbound';
import { webhookDeliveries } from '../ops/metrics';
import { defineJob, retried } from '../queue/jobs';
import { QUEUES } from '../queue/names';
import { DELIVERY_HEADER, EVENT_HEADER, SIGNATURE_HEADER, WEBHOOK_SECRET_PURPOSE, signatureHeader } from './signing';

/** An event as the feed lists it and a webhook receives it: the same JSON at every attempt. */
export function presentEvent(event: Pick<DomainEvent, 'id' | 'name' | 'payload' | 'created_at'>): { id: number; type: string; created_at: number; data: unknown } {
  return { id: event.id, type: event.name, created_at: event.created_at, data: JSON.parse(event.payload) };
}

const isFinal = (job: Job) => job.attemptsMade + 1 >= (job.opts.attempts ?? 1);

/**
 * One attempt at POSTing an event to a webhook: JSON body, signed (`X-Helpdesk-Signature:
 * t=<ts>,v1=<hex>`, HMAC-SHA256 over `<ts>.<body>` with the webhook's secret), with the delivery's
 * stable id and the event name. A 2xx answer is success; anything else (another status, a redirect,
 * a timeout, no connection, a refused target) is recorded (status and timing, never the
 * receiver's body) and thrown, so BullMQ retries it with exponential backoff.
 */
export const webhookDelivery = defineJob<{ deliveryId: number }>({
  name: 'webhook.deliver',
  queue: QUEUES.webhooks,
  schema: Joi.object({ deliveryId: Joi.number().integer().min(1).required() }),
  // Kept a day once delivered: the delivery log (`webhook_deliveries`) is the record.
  options: () => retried(config().webhooks.attempts, config().webhooks.backoffMs, { age: 24 * 3600, count: 10000 }),
  async handle({ deliveryId }, job) {
    const delivery = await WebhookDelivery.findByPk(deliveryId);
    if (!delivery) return { skipped: 'the delivery no longer exists' };
    const [webhook, event] = await Promise.all([Webhook.findByPk(delivery.webhook_id), DomainEvent.findByPk(delivery.event_id)]);
    if (!webhook || !event || webhook.enabled !== 1) {
      await delivery.update({ status: 'skipped', error: !webhook || !event ? 'The webhook or the event no longer exists.' : 'The webhook is disabled.' });
      webhookDeliveries.inc({ outcome: 'skipped' });
      return { skipped: delivery.error };
    }
    const body = JSON.stringify(presentEvent(event));
    const timestamp = now();
    const started = Date.now();
    let responseCode: number | null = null;
    let error: string | null = null;
    try {
      // The receiver's body is not read: a target that is not what it seems must not be read back.
      ({ status: responseCode } = await postChecked(webhook.url, body, {
        use: 'webhook',
        timeoutMs: config().webhooks.timeoutMs,
        headers: {
          'Content-Type': 'application/json',
          'User-Agent': 'helpdesk-webhooks/1',
          [SIGNATURE_HEADER]: signatureHeader(decryptSecret(webhook.secret, WEBHOOK_SECRET_PURPOSE), timestamp, body),
          [DELIVERY_HEADER]: delivery.uuid,
          [EVENT_HEADER]: event.name,
        },
      }));
      if (responseCode < 200 || responseCode > 299) error = `The receiver answered ${responseCode} after ${Date.now() - started} ms.`;
    } catch (err) {
      const e = err as Error & { code?: string };
      if (e instanceof OutboundRefusedError) error = `Not delivered: ${e.message}`;
      else if (e.name === 'TimeoutError') error = `No answer within ${config().webhooks.timeoutMs} ms.`;
      else error = `No answer after ${Date.now() - started} ms (${e.code ?? 'connection failed'}).`;
    }
    const attempts = delivery.attempts + 1;
    if (error === null) {
      await delivery.update({ status: 'succeeded', attempts, response_code: responseCode, error: null, last_attempt_at: timestamp, delivered_at: now() });
      webhookDeliveries.inc({ outcome: 'succeeded' });
      return { status: responseCode };
    }
    const final = isFinal(job);
    await delivery.update({ status: final ? 'failed' : 'pending', attempts, response_code: responseCode, error, last_attempt_at: timestamp });
    webhookDeliveries.inc({ outcome: final ? 'failed' : 'retry' });
    throw new Error(error);
  },
  // Failed without the handler's last attempt (its worker stopped while sending it, more often than
  // allowed): the delivery fails rather than stay pending, and can be sent again (redeliver).
  async failed({ deliveryId }, reason) {
    const [changed] = await WebhookDelivery.update(
      { status: 'failed', error: `Not delivered: ${reason}.` },
      { where: { id: deliveryId, status: 'pending' } },
    );
    if (changed) webhookDeliveries.inc({ outcome: 'failed' });
  },
});
