import { Op, type Transaction } from 'sequelize';
import { Channel, Department, Ticket, TicketMessage, User } from '../../db/models';
import { BY, MESSAGE_TYPE } from '../../db/models/TicketMessage';
import type { EventFacts, EventPayloads, MailRefusal } from '../../events';
import { enqueue } from '../../queue/outbox';
import { emailTemplates } from '../templateMapping';
import { templateKeyOf, ticketMail, type NoticeKind, type OperatorMailKind, type UserMailKind } from './job';
import { jsonList, ownAddresses } from '../common';
import { cachedTicketSettings } from '../ticketSettings';
import { activeOperators, assignedIds, departmentOperatorIds, organisationCopies, watcherIds } from './recipients';

/**
 * Which mails the ticket events cause, written to the outbox in the event's transaction (so a
 * mail exists exactly when the change it reports was committed). One job per operator; one job
 * for the user and the ticket's CC addresses (and the managers of the user's organisation who ask
 * for its mails: recipients.ts copiedAddresses). A kind whose department template is -1 writes
 * nothing (the mail job checks the template again when it sends).
 *
 *   ticket.created     user_ticket_opened (send_user_email; the department's notify_email_ticket /
 *                      notify_frontend_ticket for tickets opened by mail / on the web), and
 *                      operator_ticket_opened to the department's operators and those assigned,
 *                      except the operator who opened it (send_operators_email); an internal ticket:
 *                      operator_internal_opened to the same operators, no user mail
 *   message.created    an operator's reply: user_ticket_reply (send_user_email), and with
 *                      send_operators_email operator_operator_ticket_reply to the assigned and watching
 *                      operators (else the department's) except the author; a user's reply:
 *                      operator_user_ticket_reply to the assigned operators (else the department's)
 *                      and the watching ones (send_operators_email), and user_user_ticket_reply
 *                      (the department's user_ticket_reply template) to the ticket's CC addresses
 *                      and its organisation's managers who asked for it, and to its user when
 *                      someone else wrote it, but the author's (send_user_email); a note: operator_ticket_note to
 *                      the assigned and watching operators except the author (send_operators_email);
 *                      a draft: nothing. The copy of a message to the CC addresses leaves out its
 *                      author and the operators told of it by their own mail (`notifiedOperators`)
 *   message.forwarded  the forward to its recipients (never a draft)
 *   ticket.updated     operator_assigned to each newly assigned operator; a request that moved
 *                      the ticket to another department: operator_department_changed to the new
 *                      department's operators; a request that resolved it (the status became
 *                      `default_resolved_status`) and left it unlocked: user_ticket_operatorclose
 *                      (locking closes a ticket silently); with the cause `autoclose` (the
 *                      scheduler), user_ticket_autoclose instead
 *   ticket.feedback_requested   user_feedback_request (the feedback form's template)
 *   ticket.waiting_response     user_ticket_waitingresponse
 *   mailbox.refused    the notice to the sender: user_ticket_locked, user_ticket_disablereplies,
 *                      user_email_attachmentrejected
 */

interface TicketScope {
  ticket: Ticket;
  department: Pick<Department, 'notify_email_ticket' | 'notify_frontend_ticket'> | null;
  templates: Record<string, number>;
}

async function scopeOf(ticketId: number, transaction: Transaction): Promise<TicketScope | null> {
  const ticket = await Ticket.findByPk(ticketId, { transaction });
  if (!ticket || ticket.deleted_at) return null;
  const department = await Department.findByPk(ticket.department_id, { transaction });
  return { ticket, department, templates: emailTemplates(department?.email_templates ?? null) };
}

const mapped = (scope: TicketScope, kind: UserMailKind | OperatorMailKind | NoticeKind) => (scope.templates[templateKeyOf(kind)] ?? -1) > 0;

/**
 * The user's mail (with the ticket's CC addresses). `notified`: the operators told of the same
 * message by a mail of their own; those of them on the CC list get no customer copy as well.
 */
async function mailUser(
  kind: UserMailKind, scope: TicketScope, messageId: number | undefined, transaction: Transaction, notified: number[] = [], userOnMail?: boolean,
): Promise<void> {
  if (!mapped(scope, kind)) return;
  const notifiedOperators = await copiedOperators(scope.ticket, notified, transaction);
  await enqueue(transaction, ticketMail, {
    kind, ticketId: scope.ticket.id, ...(messageId ? { messageId } : {}), ...(notifiedOperators.length ? { notifiedOperators } : {}),
    ...(userOnMail !== undefined ? { userOnMail } : {}),
  });
}

/** The operators among `ids` with an address (main or additional) on the ticket's CC list (read only when it has one). */
async function copiedOperators(ticket: Ticket, ids: number[], transaction: Transaction): Promise<number[]> {
  const cc = jsonList(ticket.cc);
  if (!cc.length || !ids.length) return [];
  const operators = await User.findAll({ attributes: ['id', 'email'], where: { id: { [Op.in]: ids } }, transaction });
  const addresses = await ownAddresses(operators, transaction);
  return operators.filter((o) => addresses.get(o.id)!.some((a) => cc.includes(a))).map((o) => o.id).sort((a, b) => a - b);
}

/** One mail per active operator among `ids` but `except` (none when the template is unmapped); the operators mailed. */
async function mailOperators(
  kind: OperatorMailKind, scope: TicketScope, ids: number[], except: number | null, messageId: number | undefined, transaction: Transaction,
): Promise<number[]> {
  if (!mapped(scope, kind) || !ids.length) return [];
  const recipients = await activeOperators(ids, except, transaction);
  for (const recipientId of recipients) {
    await enqueue(transaction, ticketMail, { kind, ticketId: scope.ticket.id, recipientId, ...(messageId ? { messageId } : {}) });
  }
  return recipients;
}

/** The operator who wrote a message, or null when a user did. */
const operatorAuthor = (message: TicketMessage) => (message.by === BY.OPERATOR ? message.user_id : null);

/** Whether the department lets a new ticket of this channel tell its user (tickets opened by the API always may). */
async function channelNotifiesUser(scope: TicketScope, transaction: Transaction, known?: string): Promise<boolean> {
  const name = known?.toLowerCase() ?? (await Channel.findByPk(scope.ticket.channel_id, { attributes: ['id', 'name'], transaction }))?.name.toLowerCase();
  if (name === 'email') return scope.department?.notify_email_ticket !== 0;
  if (name === 'web') return scope.department?.notify_frontend_ticket !== 0;
  return true;
}

export async function onTicketCreated(p: EventPayloads['ticket.created'], transaction: Transaction, opened?: EventFacts['ticket.created']): Promise<void> {
  // Nobody to tell: nothing to read.
  if (!p.sendUserEmail && !p.sendOperatorsEmail) return;
  // The ticket createTicket has just written comes with the event (its rows need not be read back); else read.
  const scope: TicketScope | null = opened
    ? { ticket: opened.ticket, department: opened.department, templates: emailTemplates(opened.department.email_templates) }
    : await scopeOf(p.ticketId, transaction);
  const message = opened?.message ?? (await TicketMessage.findByPk(p.messageId, { transaction }));
  if (!scope || !message || message.is_draft) return;
  const { ticket } = scope;
  // The operators first: those told of the new ticket get no customer copy of it too (mailUser).
  let notified: number[] = [];
  const kind = ticket.internal ? 'operator_internal_opened' : 'operator_ticket_opened';
  if (p.sendOperatorsEmail && mapped(scope, kind)) {
    const assigned = opened ? [...opened.assigned].sort((a, b) => a - b) : await assignedIds(ticket.id, transaction);
    const operators = [...(await departmentOperatorIds(ticket.department_id, transaction)), ...assigned];
    notified = await mailOperators(kind, scope, operators, operatorAuthor(message), message.id, transaction);
  }
  if (!ticket.internal && p.sendUserEmail && (await channelNotifiesUser(scope, transaction, opened?.channelName))) {
    await mailUser('user_ticket_opened', scope, message.id, transaction, notified);
  }
}

export async function onMessageCreated(p: EventPayloads['message.created'], transaction: Transaction): Promise<void> {
  // Every mail below is asked for by one of the two flags: with neither, nothing to read.
  if (!p.sendUserEmail && !p.sendOperatorsEmail) return;
  const message = await TicketMessage.findByPk(p.messageId, { transaction });
  if (!message || message.is_draft) return;
  const scope = await scopeOf(message.ticket_id, transaction);
  if (!scope) return;
  const { ticket } = scope;
  const author = operatorAuthor(message);
  if (message.type === MESSAGE_TYPE.NOTE) {
    if (!p.sendOperatorsEmail || !mapped(scope, 'operator_ticket_note')) return;
    const ids = [...(await assignedIds(ticket.id, transaction)), ...(await watcherIds(ticket.id, transaction))];
    await mailOperators('operator_ticket_note', scope, ids, author, message.id, transaction);
    return;
  }
  if (message.type !== MESSAGE_TYPE.MESSAGE) return;
  // The operators first: those told of the message get no customer copy of it too (mailUser).
  let notified: number[] = [];
  if (message.by === BY.OPERATOR) {
    if (p.sendOperatorsEmail && mapped(scope, 'operator_operator_ticket_reply')) {
      // Those assigned or watching who can still be told (an inactive operator is no one), else the department's.
      let ids = await activeOperators([...(await assignedIds(ticket.id, transaction)), ...(await watcherIds(ticket.id, transaction))], null, transaction);
      if (!ids.length) ids = await departmentOperatorIds(ticket.department_id, transaction);
      notified = await mailOperators('operator_operator_ticket_reply', scope, ids, author, message.id, transaction);
    }
    if (p.sendUserEmail && !ticket.internal) await mailUser('user_ticket_reply', scope, message.id, transaction, notified);
    return;
  }
  if (p.sendOperatorsEmail && mapped(scope, 'operator_user_ticket_reply')) {
    // The assigned operators who can still be told, else the department's (an inactive assignee is no one).
    const assigned = await activeOperators(await assignedIds(ticket.id, transaction), null, transaction);
    const ids = [...(assigned.length ? assigned : await departmentOperatorIds(ticket.department_id, transaction)), ...(await watcherIds(ticket.id, transaction))];
    notified = await mailOperators('operator_user_ticket_reply', scope, ids, null, message.id, transaction);
  }
  // A user's reply: its copy to the ticket's CC addresses and the organisation's managers who asked
  // for it, and to the ticket's user when someone else wrote it (the mail leaves out the author's own).
  if (p.sendUserEmail && !ticket.internal && (message.user_id !== ticket.user_id || jsonList(ticket.cc).length
    || (await organisationCopies(ticket, transaction)).some((m) => m.id !== message.user_id))) {
    await mailUser('user_user_ticket_reply', scope, message.id, transaction, notified, p.userOnMail);
  }
}

export async function onMessageForwarded(p: EventPayloads['message.forwarded'], transaction: Transaction): Promise<void> {
  const message = await TicketMessage.findByPk(p.messageId, { attributes: ['id', 'ticket_id', 'type', 'is_draft'], transaction });
  if (!message || message.is_draft || message.type !== MESSAGE_TYPE.FORWARD) return;
  await enqueue(transaction, ticketMail, { kind: 'forward', ticketId: message.ticket_id, messageId: message.id });
}

export async function onTicketUpdated(p: EventPayloads['ticket.updated'], transaction: Transaction): Promise<void> {
  const byRequest = p.cause === undefined;
  const statusChanged = p.changes.includes('status');
  const closedInactive = statusChanged && p.cause === 'autoclose';
  // A request that resolved it; the audit it carries tells the new status without reading the ticket
  // (the settings come from the config cache), so a change to another status reads nothing here.
  const resolvedStatus = statusChanged && byRequest ? (await cachedTicketSettings(transaction)).defaultResolvedStatus : null;
  const newStatus = p.audit?.changes.status_id?.after;
  const mayBeResolved = resolvedStatus !== null && (newStatus === undefined || newStatus === resolvedStatus);
  const movedDepartment = byRequest && p.changes.includes('department');
  if (!p.newlyAssigned.length && !closedInactive && !mayBeResolved && !movedDepartment) return;
  const scope = await scopeOf(p.ticketId, transaction);
  if (!scope) return;
  const { ticket } = scope;
  if (closedInactive && !ticket.internal) await mailUser('user_ticket_autoclose', scope, undefined, transaction);
  // Not for a ticket locked (by this request or before): the mail invites a reply to reopen it,
  // which a locked ticket refuses; SupportPal's lock sends no mail of its own either.
  if (mayBeResolved && ticket.status_id === resolvedStatus && !ticket.internal && !ticket.locked) await mailUser('user_ticket_operatorclose', scope, undefined, transaction);
  if (movedDepartment && mapped(scope, 'operator_department_changed')) {
    // The operators of the department it moved to; those newly assigned hear of it by operator_assigned.
    const ids = (await departmentOperatorIds(ticket.department_id, transaction)).filter((id) => !p.newlyAssigned.includes(id));
    await mailOperators('operator_department_changed', scope, ids, null, undefined, transaction);
  }
  if (p.newlyAssigned.length) await mailOperators('operator_assigned', scope, p.newlyAssigned, null, undefined, transaction);
}

/** The reminder goes out when its department maps user_ticket_waitingresponse (checked again when it is sent). */
export async function onWaitingResponse(p: EventPayloads['ticket.waiting_response'], transaction: Transaction): Promise<void> {
  const scope = await scopeOf(p.ticketId, transaction);
  if (!scope || scope.ticket.internal) return;
  await mailUser('user_ticket_waitingresponse', scope, undefined, transaction);
}

/** The feedback request goes out with the feedback form's own template (checked when it is sent). */
export async function onFeedbackRequested(p: EventPayloads['ticket.feedback_requested'], transaction: Transaction): Promise<void> {
  await enqueue(transaction, ticketMail, { kind: 'user_feedback_request', ticketId: p.ticketId, feedbackId: p.feedbackId });
}

const REFUSAL_NOTICES: Record<MailRefusal, NoticeKind> = {
  locked: 'user_ticket_locked', replies_disabled: 'user_ticket_disablereplies', attachments: 'user_email_attachmentrejected',
};

/**
 * A notice to the sender of a refused mail: the department's template for refused files and for
 * replies by mail it does not take; the shipped `user_ticket_locked` (or the brand's) always.
 */
export async function onMailboxRefused(p: EventPayloads['mailbox.refused'], transaction: Transaction): Promise<void> {
  const kind = REFUSAL_NOTICES[p.refused];
  if (kind !== 'user_ticket_locked') {
    const scope = await scopeOf(p.ticketId, transaction);
    if (!scope || !mapped(scope, kind)) return;
  }
  await enqueue(transaction, ticketMail, { kind, ticketId: p.ticketId, address: p.address, ...(p.messageId ? { messageId: p.messageId } : {}) });
}
