import { randomBytes } from 'node:crypto';
import type { Job } from 'bullmq';
import { Op } from 'sequelize';
import type { Attachment } from 'nodemailer/lib/mailer';
import {
  Brand, Channel, Department, DepartmentEmail, FeedbackForm, Ticket, TicketAttachment, TicketFeedback, TicketMessage, User,
} from '../../db/models';
import { BY, MESSAGE_TYPE, type ForwardExtra } from '../../db/models/TicketMessage';
import type { MailAudience } from '../../db/models/MailMessageId';
import { config } from '../../config';
import { Joi } from '../../lib/validation';
import { frameRendered, fromAddress, ownMailHeaders, withReplyMarker } from '../../mail/compose';
import { transaction as inTransaction } from '../../db/transaction';
import { mailJobOptions } from '../../mail/retries';
import { transportFor } from '../../mail/transports';
import { defineJob } from '../../queue/jobs';
import { QUEUES } from '../../queue/names';
import { loadUploads, mimeOf, readUpload } from '../../storage/uploads';
import { formattedName } from '../../user/people/presenter';
import { emailTemplates } from '../templateMapping';
import { mailContext, recipientLocales, renderMail, shippedTemplateId, templateFor, translatedTemplate } from './content';
import { jsonList, ownAddresses } from '../common';
import { stillWaiting } from '../waitingReminders';
import { copiedAddresses, departmentOperatorIds, withoutOwnAddresses } from './recipients';
import { oneLine, richText } from './render';
import { overNotificationCap } from './notificationCap';
import { replyAddress } from './replyAddress';
import { mailDomain, newMessageId, operatorAudience, recordMessageId, subjectWithNumber, threadOf } from './threading';
import { threadIndex, threadTopic } from './outlookThread';

/**
 * The mails of tickets: one job, `ticket.mail`, whose payload names the kind of mail and ids
 * only. Which mails an event causes is decided in its transaction (./subscribers.ts); what the
 * mail says, and whether it still goes out, is decided when it is sent: a template mapped to -1
 * since, a recipient made inactive, a message deleted or a ticket trashed in between send nothing
 * (but a forward, which is sent).
 */

/**
 * Mails to the ticket's user (and its CC addresses). `user_user_ticket_reply` (SupportPal 5's
 * name) is a user's reply copied to the other people of the ticket (its CC addresses, and its user
 * when someone else wrote it), never to its author: a department has no template key of
 * its own for it, so it goes out with the department's `user_ticket_reply` (docs/mail.md).
 */
export const USER_MAIL_KINDS = [
  'user_ticket_opened', 'user_ticket_reply', 'user_user_ticket_reply', 'user_ticket_waitingresponse', 'user_ticket_autoclose',
  'user_ticket_operatorclose', 'user_feedback_request',
] as const;
/** Mails to one operator each (`recipientId`). */
export const OPERATOR_MAIL_KINDS = [
  'operator_ticket_opened', 'operator_internal_opened', 'operator_user_ticket_reply', 'operator_operator_ticket_reply',
  'operator_ticket_note', 'operator_assigned', 'operator_department_changed',
] as const;
/**
 * Notices to the sender of an incoming mail (`address`), queued by the mailbox worker: files
 * refused, replies by mail not accepted, the ticket locked. The first two are department
 * templates; the locked notice is the shipped `user_ticket_locked` (or the brand's own version).
 */
export const NOTICE_KINDS = ['user_email_attachmentrejected', 'user_ticket_disablereplies', 'user_ticket_locked'] as const;
/** Every kind: the department template keys they use, the feedback form's template, and a forward (no template). */
export const TICKET_MAIL_KINDS = [...USER_MAIL_KINDS, ...OPERATOR_MAIL_KINDS, ...NOTICE_KINDS, 'forward'] as const;

export type UserMailKind = (typeof USER_MAIL_KINDS)[number];
export type OperatorMailKind = (typeof OPERATOR_MAIL_KINDS)[number];
export type NoticeKind = (typeof NOTICE_KINDS)[number];
export type TicketMailKind = (typeof TICKET_MAIL_KINDS)[number];

export interface TicketMailPayload {
  kind: TicketMailKind;
  ticketId: number;
  /** The message the mail is about (replies, notes, forwards, a new ticket's first message). */
  messageId?: number;
  /** The operator an operator mail goes to. */
  recipientId?: number;
  /** The feedback request a user_feedback_request mail carries. */
  feedbackId?: number;
  /** The address a notice goes to (the sender of the incoming mail it is about). */
  address?: string;
  /**
   * A user mail about a message: the operators on the ticket's CC list who are told of the same
   * message by their own notification, so get no customer copy as well (./subscribers.ts).
   */
  notifiedOperators?: number[];
  /**
   * user_user_ticket_reply of a reply by mail from someone else than the ticket's user: whether
   * that user was among the mail's To and Cc (then they had it, and get no copy).
   */
  userOnMail?: boolean;
}

/** The department template key of a kind: its own name, but for a user's reply to the CC addresses. */
export const templateKeyOf = (kind: TicketMailKind): string => (kind === 'user_user_ticket_reply' ? 'user_ticket_reply' : kind);

/** Mails written by a person (an operator's or a user's reply, a forward) are ordinary mail; the rest are automatic (RFC 3834). */
const HUMAN_WRITTEN: ReadonlySet<TicketMailKind> = new Set(['user_ticket_reply', 'user_user_ticket_reply', 'forward']);
/** Mails that carry the files attached to their message. */
const WITH_ATTACHMENTS: ReadonlySet<TicketMailKind> = new Set(['user_ticket_reply', 'user_user_ticket_reply', 'forward']);
/**
 * User mails that also go to the ticket's CC addresses, and to the managers of its user's
 * organisation who asked for them (recipients.ts copiedAddresses), as the copy of a user's reply does.
 */
const TO_CC: ReadonlySet<TicketMailKind> = new Set([
  'user_ticket_opened', 'user_ticket_reply', 'user_ticket_waitingresponse', 'user_ticket_autoclose', 'user_ticket_operatorclose',
]);
/** Operator mails about the ticket itself, not one of its messages. */
const WITHOUT_MESSAGE: ReadonlySet<OperatorMailKind> = new Set(['operator_assigned', 'operator_department_changed']);

const id = () => Joi.number().integer().min(1);

const skip = (reason: string) => ({ skipped: reason });

interface Draft {
  to: string[];
  cc: string[];
  bcc: string[];
  subject: string;
  html: string;
  text: string;
  from: { name: string; address: string; department?: boolean };
  /** The address of the X-Loop marker when `from` is not the department's (a forward from an operator's own address). */
  loop?: string;
}

/** The address the ticket's mail goes out from: its department email's (`department` set), else the brand's (fromAddress). */
async function ticketFrom(ticket: Ticket, brand: Brand): Promise<{ name: string; address: string; department?: boolean }> {
  const email = ticket.department_email_id ? await DepartmentEmail.findByPk(ticket.department_email_id, { attributes: ['address'] }) : null;
  if (email) return { name: brand.name, address: email.address, department: true };
  return fromAddress(brand);
}

/** The template of a kind: the department's mapping (-1: none), or the feedback form's. */
async function templateIdOf(kind: TicketMailKind, ticket: Ticket, feedback: TicketFeedback | null): Promise<number | null> {
  if (kind === 'user_feedback_request') {
    const form = feedback ? await FeedbackForm.findByPk(feedback.form_id, { attributes: ['id', 'email_template_id'] }) : null;
    return form?.email_template_id ?? null;
  }
  if (kind === 'forward') return null;
  if (kind === 'user_ticket_locked') return shippedTemplateId(kind);
  const department = await Department.findByPk(ticket.department_id, { attributes: ['id', 'email_templates'] });
  const mapped = department ? emailTemplates(department.email_templates)[templateKeyOf(kind)] : -1;
  return mapped && mapped > 0 ? mapped : null;
}

interface Loaded {
  ticket: Ticket;
  brand: Brand;
  message: TicketMessage | null;
}

async function userDraft(kind: UserMailKind, p: TicketMailPayload, { ticket, brand, message }: Loaded): Promise<Draft | { skipped: string }> {
  if (ticket.internal) return skip('an internal ticket mails no user');
  if ((kind === 'user_ticket_opened' || kind === 'user_ticket_reply' || kind === 'user_user_ticket_reply') && !message) return skip('the mail needs its message');
  if (kind === 'user_ticket_reply' && (message!.by !== BY.OPERATOR || message!.type !== MESSAGE_TYPE.MESSAGE)) return skip('not an operator reply');
  if (kind === 'user_user_ticket_reply' && (message!.by !== BY.USER || message!.type !== MESSAGE_TYPE.MESSAGE)) return skip('not a user reply');
  // A ticket reopened, or answered, before its mail went out: the news is stale.
  if (kind === 'user_ticket_operatorclose' && ticket.resolved_time === null) return skip('the ticket was reopened');
  // It asks for a reply to reopen the ticket, which a ticket locked since refuses.
  if (kind === 'user_ticket_operatorclose' && ticket.locked) return skip('the ticket was locked');
  if (kind === 'user_ticket_waitingresponse' && !(await stillWaiting(ticket))) return skip('the ticket no longer waits for its user');
  let feedback: TicketFeedback | null = null;
  if (kind === 'user_feedback_request') {
    feedback = p.feedbackId ? await TicketFeedback.findByPk(p.feedbackId) : null;
    if (!feedback || feedback.ticket_id !== ticket.id) return skip('the feedback request no longer exists');
    // Reopened (or resolved again) since the request was made: the unsent request is withdrawn.
    if (ticket.resolved_time === null || ticket.resolved_time !== feedback.resolved_time) {
      if (feedback.rating === null && feedback.fields_answered === 0) await feedback.destroy();
      return skip('the ticket was reopened; the feedback request is cancelled');
    }
  }
  const template = await templateFor(await templateIdOf(kind, ticket, feedback), ticket.brand_id);
  if (!template) return skip('the email template is disabled');

  const owner = await User.findByPk(ticket.user_id);
  const author = message?.user_id ? await User.findByPk(message.user_id) : null;
  // Copied on the ticket (or as a manager of its user's organisation), nobody gets a copy of their
  // own message (an operator's reply, one that copies its author; a manager's reply to a
  // colleague's ticket), nor one of a message their operator notification tells them of.
  const skipped = new Set(await addressesOfAll([...(author ? [author] : []), ...(await stillActive(p.notifiedOperators ?? []))]));
  let user: string[];
  let others: string[];
  if (kind === 'user_user_ticket_reply') {
    // The CC addresses (and the organisation's managers), and the ticket's user when someone else
    // wrote it (a person on the CC list, a manager of its organisation); never back to its author.
    // A reply by mail reached the addresses it was itself sent to (the message's `cc`) already,
    // and the ticket's user when they were on it: the mailbox worker tells (`userOnMail`; the
    // message's `cc` never holds the user). A reply by mail without that word (a job queued before
    // it was kept) copies the user nothing, as before.
    const byMail = await isEmailChannel(message!.channel_id);
    if (byMail) for (const a of jsonList(message!.cc)) skipped.add(a.toLowerCase());
    const toOwner = byMail ? p.userOnMail === false : true;
    const ownerCopied = toOwner && owner && owner.id !== message!.user_id && owner.type === 'user' && owner.active === 1 ? [owner.email] : [];
    user = (await withoutOwnAddresses(ownerCopied)).filter((a) => !skipped.has(a.toLowerCase()));
    others = (await withoutOwnAddresses(await copiedAddresses(ticket))).filter((a) => !skipped.has(a) && !user.includes(a));
    if (!user.length && !others.length) return skip('no recipient: nobody else is copied on the ticket');
  } else {
    const userAddress = owner && owner.type === 'user' && owner.active === 1 ? [owner.email] : [];
    const ccList = TO_CC.has(kind) ? await copiedAddresses(ticket) : [];
    const [ownerAddress, copied] = await Promise.all([withoutOwnAddresses(userAddress), withoutOwnAddresses(ccList)]);
    user = ownerAddress;
    others = copied.filter((a) => !user.includes(a) && !skipped.has(a));
    if (!user.length && !others.length) return skip('no recipient: the user is inactive and nobody is copied');
  }
  // An inactive user's copy still reaches the addresses copied on the ticket.
  const [to, cc] = user.length ? [user, others] : [others.slice(0, 1), others.slice(1)];

  const locales = await recipientLocales(owner, brand, 'user');
  const context = await mailContext({
    audience: 'user', ticket, brand, owner, operator: author?.type === 'operator' ? author : null, message, author,
    feedbackToken: feedback?.token, locales,
  });
  return { ...renderMail(await translatedTemplate(template, locales), context), to, cc, bcc: [], from: await ticketFrom(ticket, brand) };
}

/** A notice about an incoming mail, to its sender only. */
async function noticeDraft(kind: NoticeKind, p: TicketMailPayload, { ticket, brand, message }: Loaded): Promise<Draft | { skipped: string }> {
  if (!p.address) return skip('a notice needs the address it answers');
  const [to] = await withoutOwnAddresses([p.address]);
  if (!to) return skip('the sender is one of our own addresses');
  const template = await templateFor(await templateIdOf(kind, ticket, null), ticket.brand_id);
  if (!template) return skip('the email template is disabled');
  const owner = await User.findByPk(ticket.user_id);
  const locales = await recipientLocales(owner, brand, 'user');
  const context = await mailContext({ audience: 'user', ticket, brand, owner, message, author: null, locales });
  return { ...renderMail(await translatedTemplate(template, locales), context), to: [to], cc: [], bcc: [], from: await ticketFrom(ticket, brand) };
}

async function operatorDraft(kind: OperatorMailKind, p: TicketMailPayload, { ticket, brand, message }: Loaded): Promise<Draft | { skipped: string }> {
  if (!WITHOUT_MESSAGE.has(kind) && !message) return skip('the mail needs its message');
  if (kind === 'operator_department_changed' && !(await departmentOperatorIds(ticket.department_id)).includes(p.recipientId!)) return skip('the ticket has left the operator\'s department');
  const operator = p.recipientId ? await User.findByPk(p.recipientId) : null;
  if (!operator || operator.type !== 'operator') return skip('the operator no longer exists');
  if (operator.active !== 1) return skip('the operator is inactive');
  const template = await templateFor(await templateIdOf(kind, ticket, null), ticket.brand_id);
  if (!template) return skip('the email template is disabled');
  const [owner, author] = await Promise.all([
    User.findByPk(ticket.user_id),
    message?.user_id ? User.findByPk(message.user_id) : Promise.resolve(null),
  ]);
  const locales = await recipientLocales(operator, brand, 'operator');
  const context = await mailContext({ audience: 'operator', ticket, brand, owner, operator, message, author, locales });
  return { ...renderMail(await translatedTemplate(template, locales), context), to: [operator.email], cc: [], bcc: [], from: await ticketFrom(ticket, brand) };
}

function forwardExtra(message: TicketMessage): ForwardExtra | null {
  try {
    const extra = JSON.parse(message.extra ?? 'null');
    return extra && typeof extra === 'object' ? extra as ForwardExtra : null;
  } catch {
    return null;
  }
}

/** A forward: the operator's text to the recipients of its `extra`, from its `from_address`. */
async function forwardDraft({ ticket, brand, message }: Loaded): Promise<Draft | { skipped: string }> {
  if (!message || message.type !== MESSAGE_TYPE.FORWARD) return skip('not a forward');
  const extra = forwardExtra(message);
  if (!extra) return skip('the forward has no recipients');
  const list = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
  const [to, cc, bcc] = await Promise.all([withoutOwnAddresses(list(extra.to_address)), withoutOwnAddresses(list(extra.cc_address)), withoutOwnAddresses(list(extra.bcc_address))]);
  if (!to.length && !cc.length && !bcc.length) return skip('the forward has no recipients');
  const fallback = await ticketFrom(ticket, brand);
  const author = message.user_id ? await User.findByPk(message.user_id) : null;
  // `me`: the operator's own address, under their name; a department address under the brand's.
  const from = extra.from_address
    ? { name: author && author.email === extra.from_address ? formattedName(author) : brand.name, address: extra.from_address }
    : fallback;
  // The text is stored rich text: its HTML goes out as HTML, plain text escaped (as a template's {{ message.text }}).
  const body = richText(message.text);
  return {
    to, cc: cc.filter((a) => !to.includes(a)), bcc: bcc.filter((a) => !to.includes(a) && !cc.includes(a)),
    subject: oneLine(extra.subject ?? ticket.subject), html: `<div>${body.html()}</div>`, text: body.text(), from,
    // Marked with the department address it went out from, else the ticket's own (department or brand).
    loop: extra.from_address && (await isDepartmentAddress(extra.from_address)) ? extra.from_address : fallback.address,
  };
}

/** The files attached to a message, read from the uploads store, under the names they were attached with. */
async function attachmentsOf(messageId: number): Promise<Attachment[]> {
  const rows = await TicketAttachment.findAll({ where: { message_id: messageId }, order: [['id', 'ASC']] });
  // The uploads' rows in one query; then each one's bytes from its store.
  const uploads = await loadUploads(rows.map((r) => r.upload_hash));
  const out: Attachment[] = [];
  for (const row of rows) {
    const upload = uploads.get(row.upload_hash);
    // Typed by its own name: the stored row's type is that of the name the bytes were first attached under.
    if (upload) out.push({ filename: row.original_name, content: await readUpload(upload), contentType: mimeOf(row.original_name) });
  }
  return out;
}

/**
 * Whose conversation a mail is (threading.ts): a forward's recipients', one operator's, the CC
 * addresses' alone (the copy of the user's reply), everyone's but its author's (the copy of a
 * reply by someone else than the ticket's user), the ticket's user's alone (a feedback request,
 * which goes to no CC address), else the ticket's user's and CC addresses'. A notice answers the
 * mail of its message: the answer to a forward (a user's note) or an operator's reply by mail is
 * answered in that conversation, so that a vendor's answer to the notice is still a forward's
 * answer, not the customer's thread.
 */
function audienceOf(kind: TicketMailKind, p: TicketMailPayload, ticket: Ticket, message: TicketMessage | null): MailAudience {
  if (kind === 'forward') return 'forward';
  if (kind === 'user_user_ticket_reply') return message && message.user_id === ticket.user_id ? 'cc' : 'others';
  if (kind === 'user_feedback_request') return 'owner';
  if ((OPERATOR_MAIL_KINDS as readonly string[]).includes(kind)) return operatorAudience(p.recipientId!);
  if ((NOTICE_KINDS as readonly string[]).includes(kind) && message) {
    if (message.by === BY.USER && message.type === MESSAGE_TYPE.NOTE) return 'forward';
    if (message.by === BY.OPERATOR && message.user_id) return operatorAudience(message.user_id);
  }
  return 'user';
}

/** The random part of the Message-ID: the job's outbox key (the same at every retry), else random. */
const uniquePart = (job: Job | undefined) => /^outbox-\d+-([a-f0-9]{8,32})$/.exec(String(job?.id ?? ''))?.[1] ?? randomBytes(8).toString('hex');

export const ticketMail = defineJob<TicketMailPayload>({
  name: 'ticket.mail',
  queue: QUEUES.mail,
  schema: Joi.object({
    kind: Joi.string().valid(...TICKET_MAIL_KINDS).required(),
    ticketId: id().required(),
    messageId: id(),
    recipientId: id(),
    feedbackId: id(),
    address: Joi.string().email({ tlds: false }).max(255),
    notifiedOperators: Joi.array().items(id()).max(1000),
    userOnMail: Joi.boolean(),
  }),
  options: mailJobOptions,
  async handle(p, job) {
    const ticket = await Ticket.findByPk(p.ticketId);
    if (!ticket) return skip('the ticket no longer exists');
    // Notifications of a trashed ticket are not sent; a forward is: it was accepted before the
    // ticket went to the trash (forward.ts refuses one after), and its mail is what was asked for.
    if (ticket.deleted_at && p.kind !== 'forward') return skip('the ticket is in the trash');
    const brand = await Brand.findByPk(ticket.brand_id);
    if (!brand) throw new Error(`The brand ${ticket.brand_id} of ticket ${ticket.id} does not exist`);
    const message = p.messageId ? await TicketMessage.findByPk(p.messageId) : null;
    if (p.messageId && !message) return skip('the message no longer exists');
    if (message?.is_draft) return skip('drafts are never mailed');

    const loaded = { ticket, brand, message };
    const kind = p.kind;
    const draft = kind === 'forward' ? await forwardDraft(loaded)
      : (USER_MAIL_KINDS as readonly string[]).includes(kind) ? await userDraft(kind as UserMailKind, p, loaded)
        : (NOTICE_KINDS as readonly string[]).includes(kind) ? await noticeDraft(kind as NoticeKind, p, loaded)
          : await operatorDraft(kind as OperatorMailKind, p, loaded);
    if ('skipped' in draft) return draft;
    const auto = !HUMAN_WRITTEN.has(kind);
    if (auto && !(OPERATOR_MAIL_KINDS as readonly string[]).includes(kind)) {
      // A loop breaker: automatic mails to one outside address about one ticket are capped per
      // window (operators' own notifications are not: their replies come back as operator mail).
      const capped = await overNotificationCap(ticket.id, [...draft.to, ...draft.cc]);
      draft.to = draft.to.filter((a) => !capped.has(a));
      draft.cc = draft.cc.filter((a) => !capped.has(a));
      if (!draft.to.length && !draft.cc.length) return skip('the notification cap of every recipient is reached');
      if (!draft.to.length) draft.to = [draft.cc.shift()!];
    }

    const transport = transportFor(brand);
    const messageId = newMessageId({ ticketId: ticket.id, messageId: message?.id ?? null }, mailDomain(brand), uniquePart(job));
    const audience = audienceOf(kind, p, ticket, message);
    const thread = await threadOf(ticket.id, audience, messageId);
    // Every ticket mail may be answered by mail (a customer's, an operator's, a forward's recipient's reply): the marker on top.
    const framed = withReplyMarker(frameRendered(brand, { html: draft.html, text: draft.text }));
    // A new ticket's acknowledgement of an incoming mail is an automatic reply to it.
    const autoReply = kind === 'user_ticket_opened' && (await isEmailChannel(ticket.channel_id));
    const info = await transport.sendMail({
      from: draft.from,
      to: draft.to,
      cc: draft.cc.length ? draft.cc : undefined,
      bcc: draft.bcc.length ? draft.bcc : undefined,
      subject: subjectWithNumber(draft.subject, ticket.number),
      html: framed.html,
      text: framed.text,
      messageId: `<${messageId}>`,
      // Replies go to the ticket's own sub-address when the mail server delivers sub-addresses.
      replyTo: draft.from.department && config().mailbox.replySubaddress && kind !== 'forward' ? replyAddress(draft.from.address, ticket) : undefined,
      inReplyTo: thread.inReplyTo,
      references: thread.references.length ? thread.references : undefined,
      headers: {
        'X-Helpdesk-Ticket': ticket.number,
        // Outlook threads by these (./outlookThread.ts).
        'Thread-Topic': threadTopic(ticket.subject),
        'Thread-Index': threadIndex(ticket, Math.floor(Date.now() / 1000), !thread.inReplyTo),
        // Marks the mail as ours (every one: should it come back into a department mailbox, it is a loop), and an automatic one as such.
        ...ownMailHeaders(draft.loop ?? draft.from.address, auto ? (autoReply ? 'auto-replied' : 'auto-generated') : null),
      },
      attachments: message && WITH_ATTACHMENTS.has(kind) ? await attachmentsOf(message.id) : undefined,
    });
    // In a transaction of its own, run again after a deadlock (with a merge moving the ticket's
    // rows): a failure here, the mail being out, is recorded as sent and not retried (deliveries.ts).
    await inTransaction((t) => recordMessageId({ messageId, ticketId: ticket.id, ticketMessageId: message?.id ?? null, direction: 'out', audience }, t));
    return { messageId, accepted: info.accepted };
  },
});

/** Every address (primary and additional, lower case) of these people: one statement. */
const addressesOfAll = async (people: User[]): Promise<string[]> => [...(await ownAddresses(people)).values()].flat();

/** Those of these operators who are still active (an inactive one's notification is not sent: they keep their copy). */
async function stillActive(ids: number[]): Promise<User[]> {
  return ids.length ? User.findAll({ attributes: ['id', 'email'], where: { id: { [Op.in]: ids }, type: 'operator', active: 1 } }) : [];
}

async function isDepartmentAddress(address: string): Promise<boolean> {
  return !!(await DepartmentEmail.findOne({ attributes: ['id'], where: { address } }));
}

async function isEmailChannel(channelId: number): Promise<boolean> {
  const channel = await Channel.findByPk(channelId, { attributes: ['id', 'name'] });
  return channel?.name.toLowerCase() === 'email';
}
