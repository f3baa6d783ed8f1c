import { Op, QueryTypes, type Transaction } from 'sequelize';
import { now } from '../../db/entity';
import { Department, Ticket, TicketMessage, User } from '../../db/models';
import { MESSAGE_TYPE } from '../../db/models/TicketMessage';
import { sequelize } from '../../db/sequelize';
import { emit } from '../../events';
import { ValidationError, invalid } from '../../errors';
import { addMessage } from '../messages/service';
import { cachedTicketSettings } from '../ticketSettings';
import { createdSnapshot, diff, recordAudit } from './audit';
import { effectiveFormat, insertNumbered } from './number';
import { movingMessages } from './search/engine';
import { newTicketToken, updateFailed } from './service';

export interface SplitTicketInput {
  /** The message that opens the new ticket. */
  messageId: number;
  /** Also move the messages after it (by time, then id). */
  following: boolean;
  /** The operator who splits: the author of the two notes. */
  operatorId: number;
  /** Default: the ticket's subject. */
  subject?: string;
}

/**
 * Splits a ticket (locked by the caller), the counterpart of merge: the message (and, on request,
 * those after it) moves into a new ticket with the same user, department, brand, status and
 * priority; the moved messages keep the ticket they were written on (`original_ticket_id`). Both
 * tickets get an operator note naming the other, an event and an audit entry. The split starts at a
 * sent message (no note, no draft), the ticket must keep one, and a merged or trashed ticket cannot
 * be split.
 */
export async function splitTicket(ticket: Ticket, input: SplitTicketInput, transaction: Transaction): Promise<Ticket> {
  if (ticket.merged_into_id || ticket.deleted_at) throw updateFailed();
  // First, as createTicket does: on a cache miss they are read in this transaction, whose snapshot
  // must not begin before the config version was read (ticketSettings.ts).
  const settings = await cachedTicketSettings(transaction);
  const operator = await User.findOne({ where: { id: input.operatorId, type: 'operator' }, transaction });
  if (!operator) throw invalid('user_id');
  const first = await TicketMessage.findOne({ where: { id: input.messageId, ticket_id: ticket.id }, transaction });
  // A new ticket opens with a message that was sent: not a note, not a draft.
  if (!first || first.type === MESSAGE_TYPE.NOTE || first.is_draft) throw invalid('message_id');
  const later = { [Op.or]: [{ created_at: { [Op.gt]: first.created_at } }, { created_at: first.created_at, id: { [Op.gt]: first.id } }] };
  const moving = await TicketMessage.findAll({
    attributes: ['id', 'created_at', 'is_draft'], where: input.following ? { ticket_id: ticket.id, [Op.or]: [{ id: first.id }, later] } : { id: first.id },
    order: [['created_at', 'ASC'], ['id', 'ASC']], transaction,
  });
  const movingIds = moving.map((m) => m.id);
  const staying = await TicketMessage.count({ where: { ticket_id: ticket.id, type: { [Op.ne]: MESSAGE_TYPE.NOTE }, is_draft: 0, id: { [Op.notIn]: movingIds } }, transaction });
  if (!staying) throw new ValidationError('The ticket would keep no message: split from a later message.');

  const at = now();
  const department = (await Department.findByPk(ticket.department_id, { attributes: ['ticket_number_format'], transaction }))!;
  const lastReply = Math.max(...moving.filter((m) => !m.is_draft).map((m) => m.created_at), 0) || null;
  // Numbered as createTicket numbers (in the insert unless the format needs the id).
  const [split] = await insertNumbered(
    [{ tokens: effectiveFormat(department.ticket_number_format, settings.ticketNumberFormat), date: new Date(first.created_at * 1000) }], settings.defaultTimezone,
    async ([number]) => [await Ticket.create({
      number, department_id: ticket.department_id, department_email_id: ticket.department_email_id, brand_id: ticket.brand_id,
      channel_id: ticket.channel_id, user_id: ticket.user_id, status_id: ticket.status_id, priority_id: ticket.priority_id, sla_plan_id: null,
      subject: input.subject ?? ticket.subject, reply_due_time: null, resolve_due_time: null, due_time: null, resolved_time: ticket.resolved_time,
      last_reply_time: lastReply, cc: ticket.cc, locked: 0, merged: 0, internal: ticket.internal, token: newTicketToken(),
      created_at: first.created_at, updated_at: at,
    }, { transaction })],
    transaction,
  );
  const run = (sql: string) => sequelize().query(sql, { replacements: { from: ticket.id, to: split.id, ids: movingIds, at, note: MESSAGE_TYPE.NOTE }, transaction, type: QueryTypes.UPDATE });
  await movingMessages(transaction, [ticket.id, split.id], () => run('UPDATE ticket_messages SET original_ticket_id = IFNULL(original_ticket_id, ticket_id), ticket_id = :to, updated_at = :at WHERE ticket_id = :from AND id IN (:ids)'));
  // They leave the merge that brought them (if one did): a merge of the new ticket, undone, gives them back to it.
  await run('DELETE FROM ticket_message_merges WHERE message_id IN (:ids)');
  await run('UPDATE ticket_attachments SET ticket_id = :to WHERE ticket_id = :from AND message_id IN (:ids)');
  await run(`UPDATE tickets SET updated_at = :at, last_reply_time = (
      SELECT MAX(created_at) FROM ticket_messages WHERE ticket_id = :from AND is_draft = 0 AND type <> :note) WHERE id = :from`);

  // The new ticket is announced first, with its first message (the first moved one): a consumer
  // must not see a message of a ticket it has not been told of. The notes change none of its audited fields.
  const fromAudit = await recordAudit(split.id, 'split_from', {
    // The new ticket as written (no tags, operators, watchers or custom field values are copied).
    ...diff(null, createdSnapshot(split, { tags: [], assigned: [], watching: [] })), split_from: { before: null, after: ticket.id }, messages: { before: [], after: movingIds },
  }, transaction);
  await emit(transaction, 'ticket.created', { ticketId: split.id, messageId: first.id, sendUserEmail: false, sendOperatorsEmail: false, audit: fromAudit });

  const note = async (ticketId: number, text: string) => addMessage({
    ticketId, userId: operator.id, text, type: MESSAGE_TYPE.NOTE, channel: 'api', sendUserEmail: false, sendOperatorsEmail: false,
  }, transaction, { settings });
  await note(ticket.id, `Split: ${movingIds.length} message(s) moved to ticket #${split.number}.`);
  await note(split.id, `Split from ticket #${ticket.number}.`);

  const splitAudit = await recordAudit(ticket.id, 'split', { split_into: { before: null, after: split.id }, messages: { before: movingIds, after: [] } }, transaction);
  await emit(transaction, 'ticket.updated', { ticketId: ticket.id, changes: ['split'], newlyAssigned: [], audit: splitAudit });
  return split;
}
