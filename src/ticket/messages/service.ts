import type { Transaction } from 'sequelize';
import { recordDeletions } from '../../export/tombstones';
import { now } from '../../db/entity';
import { insertRows } from '../../db/insertRows';
import { lockById } from '../../db/load';
import { saveChanges } from '../../db/saveChanges';
import { Ticket, TicketMessage, User } from '../../db/models';
import { BY, MESSAGE_TYPE, type ForwardExtra } from '../../db/models/TicketMessage';
import { emit } from '../../events';
import { ValidationError, invalid } from '../../errors';
import { assertAttachments, storeAttachments, type AttachmentInput } from '../attachmentFiles';
import { addressesOf, assertPast, ccWithoutUser, channelIdOf, jsonList, normaliseCc, type ChannelName } from '../common';
import { cachedTicketSettings, type TicketSettings } from '../ticketSettings';
import { currentDueTime } from '../tickets/due';
import { recordAudit, unsavedChanges } from '../tickets/audit';
import { currentActor } from '../../audit/actor';
import { storedHtml } from '../../content/html';

/**
 * Messages of tickets: replies of users and operators, operator notes, drafts. The API, the ticket
 * service (a ticket's first message) and the mailbox worker all add messages through `addMessage`.
 *
 * Rules (research §3): a user may reply to their own ticket, to a ticket of their organisation, or
 * to one they are copied on; operators to any. Users cannot add notes (but for the answer to a
 * forward, which the mailbox worker files as its author's note), reply to internal tickets or
 * to locked ones. A user's reply sets the ticket to the `default_open_status` (the ball is in the
 * operators' court) and reopens it if it was resolved; an operator's reply leaves the status alone
 * (the caller sets it) and counts as the first reply for the SLA. Notes and drafts change nothing
 * on the ticket. A reply to a ticket merged into another goes to that other ticket.
 */

export interface AddMessageInput {
  ticketId: number;
  /** The author: the ticket's user (or a user of its organisation, or one on its CC list), or an operator. */
  userId: number;
  text: string;
  /** 0 a message (default), 1 an operator note. */
  type?: typeof MESSAGE_TYPE.MESSAGE | typeof MESSAGE_TYPE.NOTE;
  isDraft?: boolean;
  pinned?: boolean;
  /** Addresses copied on the message; they join the ticket's CC list. */
  cc?: string[];
  attachments?: AttachmentInput[];
  userIpAddress?: string | null;
  /** UNIX seconds; now when omitted. */
  createdAt?: number;
  /** Default `api`. */
  channel?: ChannelName;
  socialId?: string | null;
  /** Operator reply: mail the user(s); user reply: mail the CC addresses. Default true. */
  sendUserEmail?: boolean;
  /** User reply: notify the operators (default true); operator reply: also mail the operators (default false). */
  sendOperatorsEmail?: boolean;
  /**
   * An automatic mail (an out-of-office reply, a list mail) filed by the mailbox worker: kept on
   * the ticket, but it neither reopens it nor changes its status, and it notifies nobody.
   */
  automatic?: boolean;
  /**
   * A user's reply by mail from someone else than the ticket's user (a person on its CC list):
   * whether the ticket's user was among the mail's To and Cc, and so has it already. Its copy
   * (user_user_ticket_reply) reaches the ticket's user only when they were not; left out (a reply
   * through the API, or not known), the rule of its channel applies.
   */
  userOnMail?: boolean;
}

export interface AddMessageOptions {
  /** Settings already read in the transaction. */
  settings?: TicketSettings;
  /**
   * The address a user author writes from joins the ticket's CC list with this message (the
   * mailbox worker's reply by someone copied on the thread; the address the mail came from, which
   * may be one of the user's additional addresses): the author may then write. Written with the
   * message (one lock, one audit entry).
   */
  joinCc?: string;
  /**
   * The answer of someone one of the ticket's forwards went to (the mailbox worker): a note by
   * its author, whoever that is, for the operators only; the author need not be on the ticket and
   * joins nothing.
   */
  forwardReply?: boolean;
  /**
   * The mailbox worker: a reply it matched to a ticket that went to the trash since is filed all
   * the same (its own rules: threadTarget.ts leaves a trashed ticket alone). Anyone else's reply
   * on a trashed ticket is refused unless it is a draft.
   */
  intoTrash?: boolean;
}

/** The ticket a message goes to, locked: a ticket merged into another leads to that one. */
export async function lockTicketForMessage(ticketId: number, transaction: Transaction): Promise<Ticket> {
  let ticket = await lockById(Ticket, ticketId, transaction, 'update');
  if (!ticket) throw invalid('ticket_id');
  for (let hops = 0; ticket.merged_into_id && hops < 5; hops++) {
    const target: Ticket | null = await lockById(Ticket, ticket.merged_into_id, transaction, 'update');
    if (!target) break;
    ticket = target;
  }
  return ticket;
}

/**
 * Whether a user (not an operator) may write on the ticket: its user, a user of its organisation,
 * a user of its brand whose address is on its CC list (an address is one account per brand: the
 * user of another brand with the same address is someone else).
 */
async function userMayWrite(user: User, ticket: Ticket, transaction: Transaction): Promise<boolean> {
  if (user.id === ticket.user_id) return true;
  if (user.brand_id === ticket.brand_id && jsonList(ticket.cc).includes(user.email.toLowerCase())) return true;
  if (!user.organisation_id) return false;
  const owner = await User.findByPk(ticket.user_id, { attributes: ['id', 'organisation_id'], transaction });
  return owner?.organisation_id === user.organisation_id;
}

export interface WriteMessageValues {
  ticket: Ticket;
  author: User;
  type: number;
  text: string;
  isDraft: boolean;
  pinned: boolean;
  cc: string[];
  attachments: AttachmentInput[];
  userIpAddress: string | null;
  createdAt: number;
  channelId: number;
  socialId: string | null;
  extra?: ForwardExtra;
}

/**
 * Inserts a message and its attachments, and adds its CC addresses to the ticket's list. The
 * caller has checked everything (and locked the ticket); no rule, no event here. The message
 * returned holds every column as written (nothing to read back).
 */
export async function writeMessage(v: WriteMessageValues, transaction: Transaction): Promise<TicketMessage> {
  return (await writeMessages([v], transaction))[0];
}

/** writeMessage for several messages (the first messages of a batch of new tickets): one INSERT for all, in order. */
export async function writeMessages(values: WriteMessageValues[], transaction: Transaction): Promise<TicketMessage[]> {
  const at = now();
  const messages = await insertRows(TicketMessage, values.map((v) => ({
    ticket_id: v.ticket.id, original_ticket_id: null, channel_id: v.channelId, user_id: v.author.id, user_ip_address: v.userIpAddress,
    by: v.author.type === 'operator' ? BY.OPERATOR : BY.USER, type: v.type, text: storedHtml(v.text), is_draft: v.isDraft ? 1 : 0,
    pinned: v.pinned ? 1 : 0, social_id: v.socialId, cc: v.cc.length ? JSON.stringify(v.cc) : null,
    extra: v.extra ? JSON.stringify(v.extra) : null, created_at: v.createdAt, updated_at: Math.max(v.createdAt, at),
  })), transaction);
  for (const [i, v] of values.entries()) {
    if (v.attachments.length) await storeAttachments(v.ticket.id, messages[i].id, v.attachments, transaction);
    // A reply's copies join the ticket's CC list; a note's or a draft's change nothing on the ticket.
    if (v.cc.length && v.type !== MESSAGE_TYPE.NOTE && !v.isDraft) {
      const merged = normaliseCc([...jsonList(v.ticket.cc), ...v.cc]);
      if (merged.length !== jsonList(v.ticket.cc).length) v.ticket.set('cc', JSON.stringify(merged));
    }
  }
  return messages;
}

/** What addMessage wrote: the message as stored (every column) and its author as read (every column). */
export interface AddedMessage {
  message: TicketMessage;
  author: User;
}

export async function addMessage(input: AddMessageInput, transaction: Transaction, options: AddMessageOptions = {}): Promise<AddedMessage> {
  // The author's is a locking read: it sees a user another transaction created a moment ago (a
  // ticket's new user found by address), and keeps the author from being deleted under the
  // message. Both reads are sent at once (the driver pipelines them; MariaDB runs them in this
  // order, the ticket's lock first as everywhere): the ticket's lock, which every reply to that
  // ticket waits for, is held for one round trip less.
  const [ticket, author] = await Promise.all([
    lockTicketForMessage(input.ticketId, transaction),
    lockById(User, input.userId, transaction, 'share'),
  ]);
  if (!author) throw invalid('user_id');
  const forwardReply = options.forwardReply === true;
  const type = forwardReply ? MESSAGE_TYPE.NOTE : input.type ?? MESSAGE_TYPE.MESSAGE;
  if (type !== MESSAGE_TYPE.MESSAGE && type !== MESSAGE_TYPE.NOTE) throw invalid('message_type');
  const byUser = author.type !== 'operator';
  const joining = byUser && !forwardReply && options.joinCc ? options.joinCc.toLowerCase() : undefined;
  if (joining && !jsonList(ticket.cc).includes(joining)) ticket.set('cc', JSON.stringify([...jsonList(ticket.cc), joining]));
  if (byUser && !forwardReply) {
    if (!joining && !(await userMayWrite(author, ticket, transaction))) throw invalid('user_id');
    if (type === MESSAGE_TYPE.NOTE) throw new ValidationError('The selected message type is invalid: only operators can add notes.');
    if (ticket.internal) throw new ValidationError('Not an operator. Only operators can reply to internal tickets.');
    if (ticket.locked) throw new ValidationError(`The ticket #${ticket.number} is locked: the user cannot reply to it (a new ticket can be opened).`);
  }
  // A trashed ticket mails no one (its notifications are not sent): a reply accepted on it would
  // never reach those it is for. Restored, it takes one. A draft sends nothing, and a note is the
  // operators' record on the ticket: both are kept (as forward.ts keeps a draft forward).
  if (ticket.deleted_at && type === MESSAGE_TYPE.MESSAGE && input.isDraft !== true && options.intoTrash !== true) {
    throw new ValidationError(`The ticket #${ticket.number} is in the trash: restore it before replying to it.`);
  }
  const at = now();
  assertPast(input.createdAt, at);
  const settings = options.settings ?? (await cachedTicketSettings(transaction));
  const attachments = input.attachments ?? [];
  assertAttachments(attachments, settings);
  const createdAt = input.createdAt ?? at;
  const isDraft = input.isDraft === true;

  // The ticket's user is never copied on it (read only when addresses are copied and someone else writes).
  let cc = normaliseCc(input.cc);
  if (cc.length) {
    const owner = author.id === ticket.user_id ? author : await User.findByPk(ticket.user_id, { attributes: ['id', 'email'], transaction });
    cc = ccWithoutUser(cc, await addressesOf(owner, transaction));
  }
  const message = await writeMessage({
    ticket, author, type, text: input.text, isDraft, pinned: input.pinned === true, cc, attachments,
    userIpAddress: input.userIpAddress ?? null, createdAt, channelId: await channelIdOf(input.channel ?? 'api', transaction),
    socialId: input.socialId ?? null,
  }, transaction);

  if (!isDraft && type === MESSAGE_TYPE.MESSAGE) {
    ticket.set({ last_reply_time: Math.max(createdAt, ticket.last_reply_time ?? 0), last_reply_by: byUser ? BY.USER : BY.OPERATOR });
    if (byUser && !input.automatic) applyUserReply(ticket, settings, at);
    else if (!ticket.first_reply_time) ticket.set('first_reply_time', createdAt);
    ticket.set('due_time', ticket.resolved_time ? null : currentDueTime(ticket));
  }
  ticket.set('updated_at', at);
  // What the message changed on the ticket (status, resolution, due time, CC), read before the
  // save forgets it.
  const changes = unsavedChanges(ticket);
  // The ticket's UPDATE and its audit entry are sent together (neither needs the other's
  // answer), under the ticket's lock. A change a message causes is made by its author, through
  // the channel of the work in progress.
  const [, audit] = await Promise.all([
    saveChanges(ticket, transaction),
    Object.keys(changes).length
      ? recordAudit(ticket.id, 'replied', { ...changes, message_id: { before: null, after: message.id } }, transaction, {
        type: byUser ? 'user' : 'operator', id: author.id, channel: currentActor().channel,
      })
      : undefined,
  ]);
  await emit(transaction, 'message.created', {
    ticketId: ticket.id, messageId: message.id,
    sendUserEmail: !isDraft && !input.automatic && (input.sendUserEmail ?? true),
    sendOperatorsEmail: !isDraft && !input.automatic && (input.sendOperatorsEmail ?? byUser),
    ...(input.userOnMail !== undefined ? { userOnMail: input.userOnMail } : {}),
    ...(audit ? { audit } : {}),
  });
  return { message, author };
}

/** A user's reply: the ticket goes to the default open status, and is reopened if it was resolved. */
function applyUserReply(ticket: Ticket, settings: TicketSettings, at: number): void {
  const wasResolved = ticket.resolved_time !== null || (settings.defaultResolvedStatus !== null && ticket.status_id === settings.defaultResolvedStatus);
  if (settings.defaultOpenStatus !== null) ticket.set('status_id', settings.defaultOpenStatus);
  if (wasResolved) ticket.set({ resolved_time: null, reopened_time: at });
}

export interface UpdateMessageInput {
  text?: string;
  pinned?: boolean;
}

/**
 * Edits a message's text or pin. A forward that went out (not a draft) cannot be edited: what was
 * sent cannot change (422 `There was an error updating the message.`).
 */
export async function updateMessage(message: TicketMessage, given: UpdateMessageInput, transaction: Transaction): Promise<void> {
  const input = { ...given, text: storedHtml(given.text) };
  if (input.text !== undefined && message.type === MESSAGE_TYPE.FORWARD && !message.is_draft && input.text !== message.text) {
    throw new ValidationError('There was an error updating the message.');
  }
  const values: Record<string, unknown> = {};
  if (input.text !== undefined) values.text = input.text;
  if (input.pinned !== undefined) values.pinned = input.pinned ? 1 : 0;
  if (!Object.entries(values).some(([k, v]) => message.get(k) !== v)) return;
  await message.update(values, { transaction });
  // Activity on the ticket, as a new or deleted message is.
  await Ticket.update({ updated_at: now() }, { where: { id: message.ticket_id }, transaction });
  await emit(transaction, 'message.updated', { ticketId: message.ticket_id, messageId: message.id });
}

/** Deletes a message and its attachments (the stored files stay: others may share them): `message.deleted`. */
export async function deleteMessage(message: TicketMessage, transaction: Transaction): Promise<void> {
  await recordDeletions('messages', [message.id], transaction);
  await message.destroy({ transaction });
  await Ticket.update({ updated_at: now() }, { where: { id: message.ticket_id }, transaction });
  await emit(transaction, 'message.deleted', { ticketId: message.ticket_id, messageId: message.id });
}
