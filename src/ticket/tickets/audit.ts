import type { Transaction } from 'sequelize';
import { currentActor, type Actor } from '../../audit/actor';
import { now } from '../../db/entity';
import type { Ticket } from '../../db/models';
import { select } from '../../db/select';
import { sealedFingerprint } from '../../customfields/sealing';
import type { TicketChangeSet } from '../../events';
import { jsonList } from '../common';

/**
 * Ticket audit history: the ticket service writes one row per change, in the transaction of the
 * change, with the actor of the work in progress (audit/actor.ts) and each changed field's value
 * before and after. Fields: the ticket's own columns below, `tags`, `assigned`, `watching` (id
 * lists), `customfield.<id>` (the stored value; of an encrypted field, a fingerprint), `cc`, `deleted_at` (trash), `merged_into_id`.
 */

export type AuditAction = 'created' | 'updated' | 'replied' | 'trashed' | 'restored' | 'merged' | 'merged_into' | 'split' | 'split_from';
export type Snapshot = Record<string, unknown>;
export type Changes = Record<string, { before: unknown; after: unknown }>;

const COLUMNS = [
  'brand_id', 'department_id', 'department_email_id', 'user_id', 'subject', 'status_id', 'priority_id', 'sla_plan_id',
  'reply_due_time', 'resolve_due_time', 'due_time', 'resolved_time', 'locked', 'cc', 'merged', 'merged_into_id', 'deleted_at',
] as const;

/** What the audit compares of a ticket: two statements, in the transaction. */
export async function auditSnapshot(ticketId: number, transaction: Transaction): Promise<Snapshot> {
  const [row] = await select(`SELECT ${COLUMNS.join(', ')} FROM tickets WHERE id = :id`, { id: ticketId }, { transaction });
  const links = await select<{ k: string; v: number; x: string | null; sealed: number }>(
    `SELECT 'tags' AS k, tag_id AS v, NULL AS x, 0 AS sealed FROM ticket_tag_links WHERE ticket_id = :id
     UNION ALL SELECT 'assigned', user_id, NULL, 0 FROM ticket_assignees WHERE ticket_id = :id
     UNION ALL SELECT 'watching', user_id, NULL, 0 FROM ticket_watchers WHERE ticket_id = :id
     UNION ALL SELECT 'customfield', v.field_id, v.value, f.encrypted FROM custom_field_values v JOIN custom_fields f ON f.id = v.field_id
       WHERE f.kind = 'ticket' AND v.owner_id = :id`,
    { id: ticketId }, { transaction },
  );
  const snapshot: Snapshot = { ...row, cc: jsonList((row?.cc as string | null) ?? null) };
  for (const k of ['tags', 'assigned', 'watching']) {
    snapshot[k] = links.filter((l) => l.k === k).map((l) => Number(l.v)).sort((a, b) => a - b);
  }
  // An encrypted field's value is kept as a fingerprint: the audit shows it changed, not what it is.
  for (const l of links) if (l.k === 'customfield') snapshot[`customfield.${l.v}`] = l.sealed ? sealedFingerprint(l.x) : l.x;
  return snapshot;
}

/** The fields whose values differ (`before` null: every field the ticket has). */
export function diff(before: Snapshot | null, after: Snapshot): Changes {
  const changes: Changes = {};
  for (const k of new Set([...Object.keys(before ?? {}), ...Object.keys(after)])) {
    const [b, a] = [before?.[k] ?? null, after[k] ?? null];
    const empty = (v: unknown) => v === null || (Array.isArray(v) && !v.length);
    if (JSON.stringify(b) !== JSON.stringify(a) && !(before === null && empty(a))) changes[k] = { before: b, after: a };
  }
  return changes;
}

/**
 * The audited columns changed on a loaded ticket and not saved yet (`set` without `save`): for a
 * change made through the model, with no statement of its own.
 */
export function unsavedChanges(ticket: Ticket): Changes {
  const changes: Changes = {};
  const value = (k: string, v: unknown) => (k === 'cc' ? jsonList((v as string | null) ?? null) : v ?? null);
  for (const k of COLUMNS) {
    if (!ticket.changed(k)) continue;
    const [b, a] = [value(k, ticket.previous(k)), value(k, ticket.get(k))];
    if (JSON.stringify(b) !== JSON.stringify(a)) changes[k] = { before: b, after: a };
  }
  return changes;
}

/** One ticket's audit entry: what a change did to it. */
export interface AuditEntry { ticketId: number; action: AuditAction; changes: Changes }

/**
 * Writes audit rows, one statement for all (an entry with no change writes nothing), as `actor`
 * (by default the actor of the work in progress), and returns them, in order, as the tickets'
 * events carry them (undefined for an entry with no change).
 */
export async function recordAudits(
  entries: AuditEntry[], transaction: Transaction, actor: Actor = currentActor(),
): Promise<Array<TicketChangeSet | undefined>> {
  const changed = (e: AuditEntry) => Object.keys(e.changes).length > 0;
  const rows = entries.filter(changed).map((e) => [e.ticketId, e.action, actor.type, actor.id, actor.channel, JSON.stringify(e.changes), now()]);
  if (rows.length) {
    // One `(?, ?, ?, ?, ?, ?, ?)` per row, the values bound by the driver (none in the SQL text).
    await select(
      `INSERT INTO ticket_audits (ticket_id, action, actor_type, actor_id, channel, changes, created_at) VALUES ${rows.map(() => '(?, ?, ?, ?, ?, ?, ?)').join(', ')}`,
      rows.flat(), { transaction },
    );
  }
  return entries.map((e) => (changed(e) ? { action: e.action, actor: { type: actor.type, id: actor.id }, channel: actor.channel, changes: e.changes } : undefined));
}

/** One ticket's audit row: recordAudits for one entry. */
export async function recordAudit(
  ticketId: number, action: AuditAction, changes: Changes, transaction: Transaction, actor: Actor = currentActor(),
): Promise<TicketChangeSet | undefined> {
  const [written] = await recordAudits([{ ticketId, action, changes }], transaction, actor);
  return written;
}

/**
 * The snapshot of a ticket just inserted, built from the row written and its links, equal to what
 * auditSnapshot would read back (same fields, same order) without the two statements. For a
 * ticket without custom field values (with some, read them back with auditSnapshot).
 */
export function createdSnapshot(row: { get(key: string): unknown }, links: { tags: number[]; assigned: number[]; watching: number[] }): Snapshot {
  const snapshot: Snapshot = {};
  for (const c of COLUMNS) snapshot[c] = c === 'cc' ? jsonList((row.get('cc') as string | null) ?? null) : row.get(c) ?? null;
  snapshot.tags = [...links.tags].sort((a, b) => a - b);
  snapshot.assigned = [...links.assigned].sort((a, b) => a - b);
  snapshot.watching = [...links.watching].sort((a, b) => a - b);
  return snapshot;
}
