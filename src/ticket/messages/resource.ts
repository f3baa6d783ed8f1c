import { TicketMessage } from '../../db/models';
import { ipAddress } from '../../lib/ip';
import { equals, type Filter } from '../../http/listQuery';
import { Written, resourceRouter, type ResourceDef } from '../../http/resource';
import { Joi, field } from '../../lib/validation';
import { richText } from '../../content/html';
import { attachmentsField } from '../attachment';
import { loadMessageRelations, serializeMessage, type KnownMessage, type MessageRelations } from './presenter';
import { addMessage, deleteMessage, updateMessage, type AddMessageInput } from './service';

/** Ticket messages (`/api/ticket/message`): list (of one ticket), show, create, update (text, pinned), delete. */

const TEXT_MAX = 1_000_000;

export const messageCreateSchema = Joi.object({
  ticket_id: field.id().required(),
  user_id: field.id().required(),
  text: richText(TEXT_MAX).required(),
  user_ip_address: ipAddress().allow('', null),
  message_type: Joi.number().integer().valid(0, 1).default(0),
  attachment: attachmentsField(),
  cc: Joi.array().items(field.email()).single().max(100).allow('', null),
  is_draft: field.flag().default(0),
  send_user_email: field.flag().default(1),
  // Default by the author: 1 for a user's reply, 0 for an operator's.
  send_operators_email: field.flag(),
  pinned: field.flag().default(0),
  created_at: field.timestamp(),
});

export const messageUpdateSchema = Joi.object({
  text: richText(TEXT_MAX),
  pinned: field.flag(),
});

export function toAddMessageInput(b: Record<string, any>): AddMessageInput {
  return {
    ticketId: b.ticket_id, userId: b.user_id, text: b.text, userIpAddress: b.user_ip_address ?? null, type: b.message_type,
    attachments: b.attachment, cc: b.cc ?? undefined, isDraft: b.is_draft === 1, pinned: b.pinned === 1, createdAt: b.created_at,
    channel: 'api', sendUserEmail: b.send_user_email === 1,
    sendOperatorsEmail: b.send_operators_email === undefined ? undefined : b.send_operators_email === 1,
  };
}

const filters: Record<string, Filter> = {
  ticket_id: equals('ticket_id', field.id().required()),
  /** 0 operator, 1 user. */
  by: equals('by', Joi.number().integer().valid(0, 1)),
  /** 0 messages, 1 notes (2 forwards). */
  type: equals('type', Joi.number().integer().valid(0, 1, 2)),
};

export const messageResource: ResourceDef<TicketMessage, MessageRelations, KnownMessage> = {
  path: '/message',
  model: TicketMessage,
  label: 'message',
  sortable: ['by', 'type', 'pinned', 'created_at', 'updated_at'],
  filters,
  dates: true,
  listParams: { include_draft: field.flag().default(0) },
  listScope: (p) => (p.include_draft === 1 ? {} : { is_draft: 0 }),
  createSchema: messageCreateSchema,
  updateSchema: messageUpdateSchema,
  // The answer presents the message as written (every column: writeMessages), not read back, with
  // its author as the write read it and, when none were given, no attachments.
  create: async (input, { transaction }) => {
    const b = toAddMessageInput(input);
    const { message, author } = await addMessage(b, transaction);
    return new Written(message, { author, unattached: !b.attachments?.length });
  },
  update: (message, input, { transaction }) => updateMessage(message, { text: input.text, pinned: input.pinned === undefined ? undefined : input.pinned === 1 }, transaction),
  destroy: (message, { transaction }) => deleteMessage(message, transaction),
  load: (messages, _ctx, known) => loadMessageRelations(messages, known),
  serialize: (message, rel) => serializeMessage(message, rel),
};

export const messageRouter = resourceRouter(messageResource);
