import type { Transaction } from 'sequelize';
import { now } from '../db/entity';
import { recordById } from '../db/load';
import { saveChanges } from '../db/saveChanges';
import { Brand, DepartmentEmail, TicketMessage, User } from '../db/models';
import { MESSAGE_TYPE } from '../db/models/TicketMessage';
import { emit } from '../events';
import { ValidationError, invalid } from '../errors';
import { resourceRouter, type ResourceDef } from '../http/resource';
import { Joi, MAX_ID, field } from '../lib/validation';
import { richText } from '../content/html';
import { attachmentsField } from './attachment';
import { assertAttachments, type AttachmentInput } from './attachmentFiles';
import { channelIdOf, normaliseCc } from './common';
import { loadMessageRelations, serializeMessage, type MessageRelations } from './messages/presenter';
import { lockTicketForMessage, writeMessage } from './messages/service';
import { cachedTicketSettings } from './ticketSettings';

/**
 * Forwards (`POST /api/ticket/forward`): an operator sends the ticket on by mail to addresses
 * outside it. The forward is a message of type 2 whose `extra` holds the recipients, the subject
 * and the address it goes out from; the mail itself is the notifications' work (message.forwarded).
 */

export interface ForwardInput {
  ticketId: number;
  /** An operator. */
  userId: number;
  text: string;
  subject: string;
  /** A department email id, `me` (the operator's own address), or none: the ticket's department email. */
  fromAddress?: number | 'me' | null;
  toAddress?: string[];
  ccAddress?: string[];
  bccAddress?: string[];
  isDraft?: boolean;
  attachments?: AttachmentInput[];
}

/**
 * The address a forward goes out from, as the mail worker sends it (ticket/mail/job.ts): the one
 * named, else the ticket's department email, else the brand's default address (null: none).
 */
async function fromAddressOf(input: ForwardInput, operator: User, departmentEmailId: number | null, brandId: number, transaction: Transaction): Promise<string | null> {
  if (input.fromAddress === 'me') return operator.email;
  const id = input.fromAddress ?? departmentEmailId;
  const email = id ? await DepartmentEmail.findOne({ attributes: ['address'], where: { id, brand_id: brandId }, transaction }) : null;
  if (email) return email.address;
  if (input.fromAddress) throw invalid('from_address');
  const brand = await Brand.findByPk(brandId, { attributes: ['id', 'default_email'], transaction });
  return brand?.default_email ?? null;
}

export async function forwardTicket(input: ForwardInput, transaction: Transaction): Promise<TicketMessage> {
  // Sent with the ticket's lock, as a reply's author is (messages/service.ts, addMessage).
  const [ticket, operator] = await Promise.all([
    lockTicketForMessage(input.ticketId, transaction),
    recordById(User, input.userId, { transaction, where: { type: 'operator' } }),
  ]);
  if (!operator) throw invalid('user_id');
  // A trashed ticket takes no forward (restored, it does): the mail is the point of the request, and
  // one was accepted, then never sent. A draft sends nothing, and is kept as a note would be.
  if (ticket.deleted_at && input.isDraft !== true) throw new ValidationError(`The ticket #${ticket.number} is in the trash: restore it before forwarding it.`);
  const to = normaliseCc(input.toAddress);
  const cc = normaliseCc(input.ccAddress);
  const bcc = normaliseCc(input.bccAddress);
  if (!to.length && !cc.length && !bcc.length) {
    throw new ValidationError('The to address field is required when none of cc address / bcc address are present.');
  }
  const attachments = input.attachments ?? [];
  assertAttachments(attachments, await cachedTicketSettings(transaction));
  const fromAddress = await fromAddressOf(input, operator, ticket.department_email_id, ticket.brand_id, transaction);
  const at = now();
  const message = await writeMessage({
    ticket, author: operator, type: MESSAGE_TYPE.FORWARD, text: input.text, isDraft: input.isDraft === true, pinned: false, cc: [],
    attachments, userIpAddress: null, createdAt: at, channelId: await channelIdOf('api', transaction), socialId: null,
    extra: { to_address: to.length ? to : null, cc_address: cc.length ? cc : null, bcc_address: bcc.length ? bcc : null, subject: input.subject, from_address: fromAddress },
  }, transaction);
  ticket.set('updated_at', at);
  await saveChanges(ticket, transaction);
  await emit(transaction, 'message.forwarded', { ticketId: ticket.id, messageId: message.id });
  return message;
}

const addresses = () => Joi.array().items(field.email()).single().max(100).allow('', null);

/** `from_address`: a department email id or `me`. */
const fromAddress = () => Joi.any().custom((value) => {
  if (value === '' || value === null) return null;
  if (typeof value === 'string' && value.trim().toLowerCase() === 'me') return 'me';
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^\s*\d{1,10}\s*$/.test(value) ? Number(value) : NaN;
  if (!Number.isInteger(n) || n < 1 || n > MAX_ID) throw new Error('The selected from address is invalid.');
  return n;
});

export const forwardCreateSchema = Joi.object({
  ticket_id: field.id().required(),
  user_id: field.id().required(),
  text: richText(1_000_000).required(),
  subject: field.string().required(),
  from_address: fromAddress(),
  to_address: addresses(),
  cc_address: addresses(),
  bcc_address: addresses(),
  is_draft: field.flag().default(0),
  attachment: attachmentsField(),
});

export const forwardResource: ResourceDef<TicketMessage, MessageRelations> = {
  path: '/forward',
  model: TicketMessage,
  label: 'message',
  actions: ['create'],
  createSchema: forwardCreateSchema,
  create: (b, { transaction }) => forwardTicket({
    ticketId: b.ticket_id, userId: b.user_id, text: b.text, subject: b.subject, fromAddress: b.from_address ?? null,
    toAddress: b.to_address ?? undefined, ccAddress: b.cc_address ?? undefined, bccAddress: b.bcc_address ?? undefined,
    isDraft: b.is_draft === 1, attachments: b.attachment,
  }, transaction),
  load: (messages) => loadMessageRelations(messages),
  serialize: (message, rel) => serializeMessage(message, rel),
};

export const forwardRouter = resourceRouter(forwardResource);
