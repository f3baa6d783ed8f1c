import { randomUUID } from 'node:crypto';
import type { Transaction } from 'sequelize';
import { Webhook, WebhookDelivery, type DomainEvent } from '../db/models';
import { definitions } from '../db/definitions';
import { onceInTransaction } from '../db/transaction';
import { enqueue } from '../queue/outbox';
import { webhookDelivery } from './deliver';

/** The event names a webhook subscribed to (`*`: every event). */
export const subscribedEvents = (webhook: Pick<Webhook, 'events'>): string[] => JSON.parse(webhook.events) as string[];

export const matches = (webhook: Pick<Webhook, 'events'>, name: string) => {
  const events = subscribedEvents(webhook);
  return events.includes('*') || events.includes(name);
};

/**
 * For every enabled webhook subscribed to the event: a delivery record and its outbox job, in the
 * event's transaction, so a change that commits is delivered (after the commit) and one that rolls
 * back is not. One query for the webhooks (there are few), whatever their number.
 */
export async function queueWebhookDeliveries(event: DomainEvent, transaction: Transaction): Promise<void> {
  // Kept per process until a webhook changes (db/definitions), and read once per transaction when
  // Redis cannot say whether they changed: a batch of imported mails emits many events.
  const webhooks = await onceInTransaction(transaction, 'webhooks.enabled', () => definitions.get('webhooks.enabled', (t) => Webhook.findAll({ where: { enabled: 1 }, attributes: ['id', 'events'], transaction: t }), transaction));
  for (const webhook of webhooks.filter((w) => matches(w, event.name))) {
    await queueDelivery(webhook.id, event, transaction);
  }
}

export async function queueDelivery(webhookId: number, event: Pick<DomainEvent, 'id' | 'name'>, transaction: Transaction): Promise<WebhookDelivery> {
  const delivery = await WebhookDelivery.create({
    webhook_id: webhookId, event_id: event.id, event_name: event.name, uuid: randomUUID(), status: 'pending', attempts: 0,
  }, { transaction });
  await enqueue(transaction, webhookDelivery, { deliveryId: delivery.id });
  return delivery;
}
