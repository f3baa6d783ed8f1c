import { ValidationError } from '../errors';
import { SECRET_MASK, sealSecret } from '../crypto/storedSecret';
import { Webhook, WebhookDelivery } from '../db/models';
import { EVENT_NAMES } from '../events';
import { equals, flagFilter } from '../http/listQuery';
import { resourceRouter, type CustomAction, type ResourceDef } from '../http/resource';
import { pick } from '../lib/serialize';
import { sqlCondition } from '../db/sql';
import { Joi, field } from '../lib/validation';
import { outboundUrl, refuseInternalName } from '../net/outbound';
import { enqueue } from '../queue/outbox';
import { webhookDelivery } from '../webhooks/deliver';
import { WEBHOOK_SECRET_PURPOSE, newWebhookSecret } from '../webhooks/signing';
import { subscribedEvents } from '../webhooks/subscriber';
import { flat } from '../lib/flatString';

const eventName = () => Joi.string().trim().valid('*', ...EVENT_NAMES);
/** Event names (`events[]=ticket.created&events[]=user.created`), or `*` for every event. */
const events = () => Joi.array().items(eventName()).single().min(1).max(100)
  .description(`Event types to deliver, or \`*\` for all: ${EVENT_NAMES.join(', ')}.`);
/**
 * Public targets only: internal ones need OUTBOUND_ALLOW_HOSTS (src/net/outbound.ts). No user info
 * (`https://alice:hunter2@host/`): it would be stored and shown in clear, and sent as Basic auth;
 * a receiver checks the signature instead.
 */
const url = () => outboundUrl('webhook', 'url')
  .custom((v: string) => {
    const { username, password } = new URL(v);
    if (username || password) throw new Error('The url must not contain a user name or password: verify deliveries with the signing secret.');
    return v;
  })
  .description('Where deliveries are POSTed (http or https, without a user name or password); internal addresses only when OUTBOUND_ALLOW_HOSTS lists them.');

/**
 * A stored URL as responses show it: the password of its user info (a webhook saved before user
 * info was refused; its deliveries still send it) as SECRET_MASK. The user info ends at the
 * authority's last `@`, as a URL parser reads it; the rest is shown as stored.
 */
function shownUrl(stored: string): string {
  const userInfo = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#\\]*)@/i.exec(stored);
  const colon = userInfo ? userInfo[2].indexOf(':') : -1;
  if (!userInfo || colon < 0 || colon === userInfo[2].length - 1) return stored;
  return flat(userInfo[1], userInfo[2].slice(0, colon + 1), SECRET_MASK, stored.slice(userInfo[0].length - 1));
}

/** `*` alone stands for every event; names are kept once, in the order given. */
const storedEvents = (names: string[]) => JSON.stringify(names.includes('*') ? ['*'] : [...new Set(names)]);

/** The secret of a webhook just created, shown in that response only (it is stored encrypted). */
const shownOnce = new WeakMap<Webhook, string>();

const encrypted = (secret: string): string =>
  sealSecret(secret, WEBHOOK_SECRET_PURPOSE, 'The webhook cannot be stored: the server has no SECRET_KEY to encrypt its signing secret with.');

export const WEBHOOK_FIELDS = ['id', 'url', 'description', 'enabled', 'created_at', 'updated_at'] as const;

/**
 * `/api/core/webhook`: URLs subscribed to event types. The signing secret is generated on create,
 * returned in that response only, and stored encrypted (crypto/secrets.ts).
 */
export const webhookResource: ResourceDef<Webhook> = {
  path: '/webhook',
  model: Webhook,
  label: 'webhook',
  sortable: ['url', 'enabled', 'created_at', 'updated_at'],
  filters: {
    enabled: flagFilter('enabled'),
    // Webhooks that receive this event (subscribed to it, or to every event).
    event: { schema: eventName(), where: (v: string) => sqlCondition`(JSON_CONTAINS(events, ${JSON.stringify(v)}) OR JSON_CONTAINS(events, '"*"'))` },
  },
  dates: true,
  createSchema: Joi.object({ url: url().required(), events: events().required(), description: field.multiline(255), enabled: field.flag().default(1) }),
  updateSchema: Joi.object({ url: url(), events: events(), description: field.multiline(255), enabled: field.flag() }),
  async create(input, { transaction }) {
    await refuseInternalName(input.url, 'webhook', 'url');
    const secret = newWebhookSecret();
    const webhook = await Webhook.create({
      url: input.url, description: input.description ?? null, enabled: input.enabled, events: storedEvents(input.events), secret: encrypted(secret),
    }, { transaction });
    shownOnce.set(webhook, secret);
    return webhook;
  },
  async update(webhook, input, { transaction }) {
    const { events: names, ...rest } = input;
    if (input.url) await refuseInternalName(input.url, 'webhook', 'url');
    await webhook.update({ ...rest, ...(names ? { events: storedEvents(names) } : {}) }, { transaction });
  },
  serialize: (w, _rel, ctx) => ({
    ...pick(w, WEBHOOK_FIELDS),
    url: shownUrl(w.url),
    events: subscribedEvents(w),
    ...(ctx.view === 'create' ? { secret: shownOnce.get(w) ?? null } : {}),
  }),
};

const STATUSES = ['pending', 'succeeded', 'failed', 'skipped'] as const;

const redeliver: CustomAction<WebhookDelivery> = {
  name: 'redeliver',
  method: 'POST',
  path: '/:id/redeliver',
  message: 'The delivery was queued again.',
  async run({ record, transaction }) {
    // One chain of attempts at a time (the row is locked): a second would send the event twice.
    if (record!.status === 'pending') throw new ValidationError('The delivery is still being attempted: it can be sent again once it has succeeded or failed.');
    // The worker would skip it, overwriting what became of the delivery (a success kept its delivered_at).
    // Shared lock: a webhook enabled meanwhile waits for this answer rather than being read as it was.
    const webhook = await Webhook.findByPk(record!.webhook_id, { attributes: ['id', 'enabled'], transaction, lock: transaction!.LOCK.SHARE });
    if (webhook?.enabled !== 1) throw new ValidationError('The webhook is disabled: enable it before sending a delivery again.');
    await record!.update({ status: 'pending', error: null }, { transaction });
    await enqueue(transaction!, webhookDelivery, { deliveryId: record!.id });
    return record;
  },
};

/**
 * `/api/core/webhook/{webhook}/delivery`: the log of a webhook's deliveries (status, attempts, the
 * receiver's last response code, the last error, timestamps), and `.../{id}/redeliver`, which sends
 * the same delivery (same `X-Helpdesk-Delivery`) again with a fresh set of attempts.
 */
const DELIVERY_HEAD_FIELDS = ['id', 'webhook_id', 'event_id'] as const;
const DELIVERY_TAIL_FIELDS = ['status', 'attempts', 'response_code', 'error', 'last_attempt_at', 'delivered_at', 'created_at', 'updated_at'] as const;

export const webhookDeliveryResource: ResourceDef<WebhookDelivery> = {
  path: '/webhook/:webhook/delivery',
  model: WebhookDelivery,
  label: 'webhook delivery',
  parent: { model: Webhook, label: 'webhook', param: 'webhook', column: 'webhook_id' },
  actions: ['list', 'show'],
  counted: { kind: 'delivery', byValue: ['status', 'event'] },
  sortable: ['status', 'attempts', 'event_id', 'created_at', 'updated_at'],
  // A delivery is of one event type: `*` (a subscription to every type) is no type and is refused.
  filters: { status: equals('status', Joi.string().valid(...STATUSES)), event: equals('event_name', Joi.string().trim().valid(...EVENT_NAMES)) },
  dates: true,
  serialize: (d) => ({
    ...pick(d, DELIVERY_HEAD_FIELDS),
    event: d.event_name,
    delivery: d.uuid,
    ...pick(d, DELIVERY_TAIL_FIELDS),
  }),
  custom: [redeliver],
};

export const webhookRouter = resourceRouter(webhookResource);
export const webhookDeliveryRouter = resourceRouter(webhookDeliveryResource);
