import { QueryTypes, type Transaction } from 'sequelize';
import { currentActor, type Actor } from '../audit/actor';
import { now } from '../db/entity';
import { sequelize } from '../db/sequelize';
import { select } from '../db/select';
import { transaction as inTransaction } from '../db/transaction';
import { emitAll, type TicketChangeSet } from '../events';
import { Joi, field } from '../lib/validation';
import { claimOnce } from '../queue/claims';
import { enqueue } from '../queue/outbox';
import { defineJob } from '../queue/jobs';
import { QUEUES } from '../queue/names';

/**
 * Tickets changed by deleting their configuration (an SLA plan, a department email) or a person
 * they are assigned to or watched by, which one statement changes however many tickets hold it (a
 * plan may hold 100,000, an operator be assigned to 20,000). Each gets the audit entry and the
 * `ticket.updated` event of the equivalent ticket update, as the actor of the delete:
 *
 * - the audit entries are written in the delete's transaction, before its UPDATE, by one
 *   INSERT ... SELECT (each ticket's `changes` built in SQL from its values before);
 * - the events are emitted in the background (`ticket.cascade_events`, scheduler worker, 200 per
 *   transaction, each batch queueing the next, as `sla.recompute` does), read back from those
 *   audit entries. Not one INSERT ... SELECT into `events` in the delete's transaction: the
 *   subscribers of every event (webhooks: a delivery row and an outbox job per subscribed webhook)
 *   run per event in emitAll, and feed rows written by SQL alone would reach no webhook; run there
 *   for 100,000 tickets they would hold the transaction far past the export's settle time.
 *   So the events follow the commit of the change by the time the worker takes to reach them.
 */

/**
 * What was deleted: the ticket column a deleted configuration row is referenced by; or what
 * tickets link to, by rows that then go: `person`, an operator (or user) they are assigned to or
 * watched by; `tag`, a ticket tag.
 */
export type CascadeField = 'sla_plan_id' | 'department_email_id' | LinkKind;
type LinkKind = 'person' | 'tag';

/** The names `ticket.updated` lists (as updateTicket does) for the audited fields. */
const EVENT_NAMES: Record<string, string> = {
  sla_plan_id: 'sla_plan', reply_due_time: 'due_time', resolve_due_time: 'due_time', due_time: 'due_time', department_email_id: 'department_email',
  assigned: 'assignedto', watching: 'watching', tags: 'tag',
};

/** Per link kind, the audited id lists that lose the id: [audit field, link table, its id column]. */
const LINKS: Record<LinkKind, Array<[field: string, table: string, column: string]>> = {
  person: [['assigned', 'ticket_assignees', 'user_id'], ['watching', 'ticket_watchers', 'user_id']],
  tag: [['tags', 'ticket_tag_links', 'tag_id']],
};

/**
 * The tickets `id` is deleted from (row `k`), for the INSERT ... SELECT of their audit entries: a
 * column's index, or a join from the link rows (`k.id IN (SELECT ... UNION SELECT ...)` was a
 * dependent subquery per ticket: every ticket read, and share-locked by the INSERT ... SELECT).
 */
const TICKETS_OF: Record<CascadeField, string> = {
  sla_plan_id: 'tickets k WHERE k.sla_plan_id = :id',
  department_email_id: 'tickets k WHERE k.department_email_id = :id',
  ...Object.fromEntries(Object.entries(LINKS).map(([kind, links]) => [kind,
    `(${links.map(([, table, column]) => `SELECT ticket_id FROM ${table} WHERE ${column} = :id`).join(' UNION ')}) l STRAIGHT_JOIN tickets k ON k.id = l.ticket_id`])) as Record<LinkKind, string>,
};

/** The delete's own audit entries, told apart from the actor's others in the id range by what they changed. */
const ENTRIES_OF: Record<CascadeField, string> = {
  sla_plan_id: "JSON_VALUE(changes, '$.sla_plan_id.before') = :id",
  department_email_id: "JSON_VALUE(changes, '$.department_email_id.before') = :id",
  ...Object.fromEntries(Object.entries(LINKS).map(([kind, links]) => [kind,
    `(${links.map(([field]) => `JSON_CONTAINS(JSON_EXTRACT(changes, '$.${field}.before'), :idJson)`).join(' OR ')})`])) as Record<LinkKind, string>,
};

/**
 * The `changes` of each ticket (row `k`) that loses `:id` from the link tables of `kind`: each id
 * list (as the audit writes them: ascending) only where the id is in it.
 */
function linkChanges(kind: LinkKind): string {
  const list = (table: string, column: string, without: boolean) => `IFNULL((SELECT JSON_ARRAYAGG(l.${column} ORDER BY l.${column}) FROM ${table} l
    WHERE l.ticket_id = k.id${without ? ` AND l.${column} <> :id` : ''}), '[]')`;
  const field = ([name, table, column]: [string, string, string]) => `IF(EXISTS (SELECT 1 FROM ${table} l WHERE l.ticket_id = k.id AND l.${column} = :id),
    CONCAT('"${name}":{"before":', ${list(table, column, false)}, ',"after":', ${list(table, column, true)}, '}'), NULL)`;
  return `CONCAT('{', CONCAT_WS(',', ${LINKS[kind].map(field).join(', ')}), '}')`;
}

/** Events per transaction; the next batch is the next run's. */
const BATCH = 200;

/**
 * Writes the audit entry of every ticket whose `column` is `id` (for a link kind: linked to `id`;
 * one statement; `changes` is the SQL of each ticket's JSON changes, over
 * the row `k`), then queues the job that emits their events. Call before the statement that
 * changes them, in its transaction.
 */
export async function auditCascade(
  column: CascadeField, id: number, changes: string, transaction: Transaction,
): Promise<void> {
  const actor = currentActor();
  const [firstId, count] = await sequelize().query(
    `INSERT INTO ticket_audits (ticket_id, action, actor_type, actor_id, channel, changes, created_at)
     SELECT k.id, 'updated', :type, :actorId, :channel, ${changes}, :at FROM ${TICKETS_OF[column]} ORDER BY k.id`,
    { replacements: { type: actor.type, actorId: actor.id, channel: actor.channel, at: now(), id }, transaction, type: QueryTypes.INSERT },
  ) as unknown as [number, number];
  if (!count) return;
  // Its rows are from the first id the statement took up to the highest this transaction sees
  // (others' rows in between are told apart by the job's conditions).
  const [{ last }] = await select<{ last: number }>('SELECT MAX(id) AS last FROM ticket_audits', {}, { transaction });
  await enqueue(transaction, cascadeEventsJob, { column, id, from: Number(firstId), to: Number(last), afterId: 0, actor });
}

interface AuditRow { id: number; ticket_id: number; changes: string }

/**
 * The tickets linked to `id` lose it (a person: their assignments and watching; a tag): an audit
 * entry and a `ticket.updated` each (assignedto, watching; tag), as an update removing it would.
 * Call before the statements that delete the link rows, in the delete's transaction.
 */
export const auditLinksRemoved = (kind: LinkKind, id: number, transaction: Transaction): Promise<void> =>
  auditCascade(kind, id, linkChanges(kind), transaction);

export const cascadeEventsJob = defineJob<{ column: CascadeField; id: number; from: number; to: number; afterId: number; actor: Actor }>({
  name: 'ticket.cascade_events',
  // The scheduler's worker runs the project's background work besides mail, mailboxes and webhooks.
  queue: QUEUES.scheduler,
  schema: Joi.object({
    column: Joi.string().valid(...Object.keys(TICKETS_OF)).required(), id: field.id().required(),
    from: Joi.number().integer().min(1).required(), to: Joi.number().integer().min(1).required(), afterId: Joi.number().integer().min(0).default(0),
    actor: Joi.object({ type: Joi.string().required(), id: Joi.number().integer().allow(null).required(), channel: Joi.string().required() }).required(),
  }),
  options: () => ({ attempts: 5, backoff: { type: 'exponential', delay: 2000 }, removeOnComplete: 1000, removeOnFail: 5000 }),
  async handle({ column, id, from, to, afterId, actor }) {
    return inTransaction(async (t) => {
      // A batch run again (a worker stopped after its commit) emitted its events and queued the next batch already.
      if (!(await claimOnce(`ticket.cascade_events:${column}:${id}:${from}:${afterId}`, t))) return { emitted: 0, again: true };
      // A range of the primary key; the conditions keep the delete's own entries only.
      const rows = await select<AuditRow>(
        `SELECT id, ticket_id, changes FROM ticket_audits
          WHERE id >= :from AND id <= :to AND id > :afterId AND action = 'updated' AND actor_type = :type AND actor_id <=> :actorId
            AND channel = :channel AND ${ENTRIES_OF[column]}
          ORDER BY id LIMIT :n`,
        { from, to, afterId, type: actor.type, actorId: actor.id, channel: actor.channel, id, idJson: String(id), n: BATCH }, { transaction: t },
      );
      await emitAll(t, rows.map((r) => {
        const changes = JSON.parse(r.changes) as TicketChangeSet['changes'];
        const audit: TicketChangeSet = { action: 'updated', actor: { type: actor.type, id: actor.id }, channel: actor.channel, changes };
        const names = [...new Set(Object.keys(changes).map((k) => EVENT_NAMES[k]))];
        return { name: 'ticket.updated' as const, payload: { ticketId: Number(r.ticket_id), changes: names, newlyAssigned: [], audit } };
      }));
      if (rows.length === BATCH) await enqueue(t, cascadeEventsJob, { column, id, from, to, afterId: Number(rows[rows.length - 1].id), actor });
      return { emitted: rows.length };
    });
  },
});
