import type { ModelCtor } from 'sequelize-typescript';
import { MailDelivery, OutboxEntry } from '../db/models';
import type { Entity } from '../db/entity';
import { equals } from '../http/listQuery';
import { loadMany } from '../db/load';
import { resourceRouter, type ResourceDef } from '../http/resource';
import { sqlCondition, type BoundCondition } from '../db/sql';
import { Joi, field } from '../lib/validation';
import { QUEUES } from '../queue/names';

type Entry = OutboxEntry & Entity;

const inDeliveries = (status: string) => sqlCondition`id IN (SELECT outbox_id FROM mail_deliveries WHERE status = ${status})`;
/** Entries whose delivery record decides their status (statusOf): it says more than `queued`. */
const undecided = sqlCondition`id NOT IN (SELECT outbox_id FROM mail_deliveries WHERE status <> ${'queued'})`;

/** Which entries have each status: exactly the rules of `statusOf`, so an entry matches the status it shows, and one only. */
const STATUS_CONDITIONS: Record<string, () => BoundCondition> = {
  queued: () => sqlCondition`processed_at IS NULL AND failed_at IS NULL AND ${undecided}`,
  sent: () => sqlCondition`${inDeliveries('sent')} OR (processed_at IS NOT NULL AND failed_at IS NULL AND ${undecided})`,
  skipped: () => inDeliveries('skipped'),
  bounced: () => inDeliveries('bounced'),
  failed: () => sqlCondition`${inDeliveries('failed')} OR (failed_at IS NOT NULL AND ${undecided})`,
};

/** queued (not sent yet, maybe retrying), sent, failed (for good), skipped (nothing to send any more), bounced (sent, then reported undeliverable). */
function statusOf(entry: OutboxEntry, delivery: MailDelivery | undefined): string {
  if (delivery && delivery.status !== 'queued') return delivery.status;
  if (entry.failed_at) return 'failed';
  if (entry.processed_at) return 'sent';
  return 'queued';
}

/**
 * `GET /api/core/mail[/{id}]`: every mail the help desk queued (the outbox entries of the mail
 * queue; the id is the entry's) and what became of it, from the record the mail worker writes:
 * recipients, subject, the SMTP server's answer, the last error, attempts.
 */
export const mailResource: ResourceDef<Entry, Map<number, MailDelivery[]>> = {
  path: '/mail',
  model: OutboxEntry as unknown as ModelCtor<Entry>,
  label: 'mail',
  scope: { queue: QUEUES.mail },
  actions: ['list', 'show'],
  counted: { kind: 'mail', byValue: ['type'] },
  sortable: ['created_at'],
  filters: {
    status: { schema: Joi.string().valid(...Object.keys(STATUS_CONDITIONS)), where: (v: string) => STATUS_CONDITIONS[v]() },
    type: equals('name', field.string(64)),
  },
  load: (entries) => loadMany(MailDelivery, 'outbox_id', entries.map((e) => e.id)),
  serialize: (entry, deliveries) => {
    const d = deliveries.get(entry.id)?.[0];
    return {
      id: entry.id,
      type: entry.name,
      payload: JSON.parse(entry.payload),
      status: statusOf(entry, d),
      recipients: d?.recipients ?? null,
      subject: d?.subject ?? null,
      message_id: d?.message_id ?? null,
      smtp_response: d?.smtp_response ?? null,
      error: d?.error ?? null,
      attempts: d?.attempts ?? 0,
      queued_at: entry.created_at,
      published_at: entry.published_at,
      sent_at: d?.sent_at ?? (d ? null : entry.processed_at),
      failed_at: d?.failed_at ?? entry.failed_at,
      created_at: entry.created_at,
      updated_at: d?.updated_at ?? entry.created_at,
    };
  },
};

export const mailRouter = resourceRouter(mailResource);
