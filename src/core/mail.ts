import type { ModelCtor } from 'sequelize-typescript';
import { MailDelivery, OutboxEntry } from '../db/models';
import type { Entity } from '../db/entity';
import { equals } from '../http/listQuery';
import { loadMany } from '../db/load';
import { resourceRouter, type ResourceDef } from '../http/resource';
import { anyOf, joined, sqlCondition, sqlFragment, trusted, type BoundCondition } from '../db/sql';
import { recordCountSum } from '../db/recordCounts';
import { Joi, field } from '../lib/validation';
import { QUEUES } from '../queue/names';

type Entry = OutboxEntry & Entity;

/**
 * The status the entry's delivery record gives it (NULL: it has none), read by the record's unique
 * `outbox_id` for the entry at hand: one row for each entry a statement reads. The set of records
 * of one status (`inDeliveries`) is read from their index instead: the few of a rare status.
 */
const recordStatus = trusted('(SELECT d.status FROM mail_deliveries d WHERE d.outbox_id = `OutboxEntry`.`id`)');
const inDeliveries = (status: string) => sqlCondition`id IN (SELECT outbox_id FROM mail_deliveries WHERE status = ${status})`;
/** Entries without a delivery record that decides their status (statusOf): none, or one that says no more than `queued`. */
const undecided = sqlCondition`COALESCE(${recordStatus}, ${'queued'}) = ${'queued'}`;

type Status = 'queued' | 'sent' | 'skipped' | 'bounced' | 'failed';

/**
 * A part of a status's entries: a condition of the log's rows, and where it holds few rows, the
 * rows of the index range that holds them (a FROM clause ending in its WHERE: mailResource.pageParts).
 */
interface Part { where(): BoundCondition; rows?(): BoundCondition }

/** The entries whose delivery record has `status`: the records of that status, by their index, then each one's entry. */
const ofRecords = (status: Status): Part => ({
  where: () => inDeliveries(status),
  rows: () => sqlFragment`mail_deliveries AS d FORCE INDEX (mail_deliveries_status)
    STRAIGHT_JOIN outbox AS \`OutboxEntry\` ON \`OutboxEntry\`.id = d.outbox_id WHERE d.status = ${status}`,
});

/** The entries of a condition on the outbox alone, read through `index`. */
const ofEntries = (index: string, where: () => BoundCondition): Part => ({
  where,
  rows: () => sqlFragment`outbox AS \`OutboxEntry\` FORCE INDEX (${trusted(index)}) WHERE ${where()}`,
});

/**
 * Which entries have each status, in parts that no entry is in two of: exactly the rules of
 * `statusOf`, so an entry matches the status it shows, and one only. Each part of a status other
 * than `sent` is a range of an index: the delivery records' status, or the outbox's unprocessed
 * entries (its index led by `processed_at`, migration 002) and failed ones (migration 101), which
 * a page reads apart (statusPageParts). `sent`'s (most of the log) test an entry's record entry
 * by entry: a page walks the log in its order, and in an OR MariaDB built the set of every sent
 * record for the first entry it tested (1.3 s at 500,000 entries, 1.5 ms so); its count is the
 * others' complement (statusCount).
 */
const STATUS_PARTS: Record<Status, ReadonlyArray<Part>> = {
  queued: [ofEntries('outbox_processed_at_failed_at_published_at', () => sqlCondition`processed_at IS NULL AND failed_at IS NULL AND ${undecided}`)],
  sent: [{ where: () => sqlCondition`${recordStatus} = ${'sent'}` }, { where: () => sqlCondition`processed_at IS NOT NULL AND failed_at IS NULL AND ${undecided}` }],
  skipped: [ofRecords('skipped')],
  bounced: [ofRecords('bounced')],
  failed: [ofRecords('failed'), ofEntries('outbox_queue_failed_at', () => sqlCondition`failed_at IS NOT NULL AND ${undecided}`)],
};
const STATUSES = Object.keys(STATUS_PARTS) as Status[];

/** The entries of one type (`AND ...`), when given. */
const typeCondition = (type: string | undefined): BoundCondition =>
  (type === undefined ? trusted('') : sqlFragment` AND \`OutboxEntry\`.name = ${type}`);

/**
 * The count of one status's entries (of one type when given), in one statement: each part's
 * entries COUNTed, the few of them; `sent`, most of the log, as the log's counters (migrations
 * 059, 066) less the entries of every other status, read in the statement's one snapshot (exact:
 * the statuses' parts are every entry, once). Each COUNT reads its part's range (at 500,000 entries
 * `status=sent` 3.9 s and `status=failed` 1.1 s before).
 */
function statusCount(status: Status, type: string | undefined): BoundCondition {
  const ofType = typeCondition(type);
  const countOf = (part: Part) => sqlCondition`SELECT COUNT(*) FROM \`outbox\` AS \`OutboxEntry\` WHERE queue = ${QUEUES.mail}${ofType} AND ${part.where()}`;
  const sumOf = (parts: ReadonlyArray<Part>) => joined(parts.map(countOf), ' + ');
  if (status !== 'sent') return sqlFragment`SELECT ${sumOf(STATUS_PARTS[status])} AS count`;
  const all = recordCountSum('mail', undefined, type === undefined ? undefined : { filter: 'type', value: type });
  return sqlFragment`SELECT ${all} - (${sumOf(STATUSES.filter((s) => s !== 'sent').flatMap((s) => STATUS_PARTS[s]))}) AS count`;
}

/** A page's condition of a status: any of its parts. */
const statusWhere = (status: Status): BoundCondition => anyOf(STATUS_PARTS[status].map((part) => part.where()));

/**
 * A page of a status other than `sent` (of a type, when given): its parts' rows (few), each read
 * through its own index. Read by its condition, the page walked the log (or the type's entries) in
 * its order until it had a page: every entry, when fewer than a page have the status.
 */
function statusPageParts(status: Status | undefined, type: string | undefined): BoundCondition[] | undefined {
  const parts = status === undefined ? [] : STATUS_PARTS[status];
  if (!parts.length || !parts.every((part) => part.rows)) return undefined;
  return parts.map((part) => sqlFragment`${part.rows!()} AND \`OutboxEntry\`.queue = ${QUEUES.mail}${typeCondition(type)}`);
}

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
  // A status alone or with a type (the log's only filters).
  countStatement: (params) => (params.status === undefined ? undefined : statusCount(params.status, params.type)),
  // A type's entries in id order are a range of (queue, name) (migration 059), read in order:
  // the walk of the primary key or of the queue's id index from the oldest entry, which the
  // optimiser chose when the type's entries were the newest, read every older entry; and the
  // intersection of the queue's and the type's indexes, which it chose in descending order,
  // read both and sorted the type's.
  notForOrder: (params) => (params.type === undefined ? [] : ['PRIMARY', 'outbox_queue_id']),
  noIndexIntersections: true,
  pageParts: (params) => statusPageParts(params.status, params.type),
  sortable: ['created_at'],
  filters: {
    status: { schema: Joi.string().valid(...STATUSES), where: statusWhere },
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
