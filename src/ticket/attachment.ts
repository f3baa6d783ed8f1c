import { Ticket, TicketAttachment, TicketMessage, type Upload } from '../db/models';
import { now } from '../db/entity';
import { emit } from '../events';
import { equals } from '../http/listQuery';
import { resourceRouter, type ResourceDef } from '../http/resource';
import { attachmentDownloadRoute } from '../storage/downloadRoute';
import { pick } from '../lib/serialize';
import { Joi, field } from '../lib/validation';
import { loadUploads, serializeUpload } from '../storage/uploads';

/**
 * Ticket attachments: files of a ticket's messages, stored once per content by the uploads store
 * and attached under the name they came with. Added with a ticket, a message or a forward
 * (`attachment[n][filename]`, `attachment[n][contents]` in base64); listed, shown, downloaded and
 * deleted here. Deleting an attachment leaves the stored file (others may share it).
 */

export const TICKET_ATTACHMENT_FIELDS = ['id', 'upload_hash', 'ticket_id', 'message_id', 'original_name', 'created_at', 'updated_at'] as const;

/** The `folder` of ticket uploads, as SupportPal names it. */
const FOLDER = 'tickets';
const MAX_ATTACHMENTS = 50;

export function serializeTicketAttachment(a: TicketAttachment, upload: Upload | undefined): Record<string, any> {
  return { ...pick(a, TICKET_ATTACHMENT_FIELDS), upload: upload ? serializeUpload(upload, FOLDER, a) : null };
}

/** `attachment[n][filename]` and `attachment[n][contents]` (base64), decoded. */
export const attachmentsField = () => Joi.array().items(Joi.object({
  filename: field.filename().required(),
  contents: field.base64File().required(),
})).single().max(MAX_ATTACHMENTS);

interface Related {
  uploads: Map<string, Upload>;
}

export const ticketAttachmentResource: ResourceDef<TicketAttachment, Related> = {
  path: '/attachment',
  model: TicketAttachment,
  label: 'attachment',
  actions: ['list', 'show', 'delete'],
  counted: { kind: 'attachment' },
  sortable: ['ticket_id', 'message_id', 'original_name', 'created_at', 'updated_at'],
  filters: { ticket_id: equals('ticket_id', field.id()), message_id: equals('message_id', field.id()) },
  async load(attachments) {
    return { uploads: await loadUploads(attachments.map((a) => a.upload_hash)) };
  },
  // Its message and ticket changed (a message shows its attachments): their updated_at moves, so
  // that the incremental export and `updated_at` filters pass the deletion on, and the feed has
  // the message's `message.updated`.
  async destroy(attachment, { transaction }) {
    await attachment.destroy({ transaction });
    const at = now();
    if (attachment.message_id) await TicketMessage.update({ updated_at: at }, { where: { id: attachment.message_id }, transaction });
    await Ticket.update({ updated_at: at }, { where: { id: attachment.ticket_id }, transaction });
    if (attachment.message_id) await emit(transaction, 'message.updated', { ticketId: attachment.ticket_id, messageId: attachment.message_id });
  },
  serialize: (a, related) => serializeTicketAttachment(a, related.uploads.get(a.upload_hash)),
};

export const ticketAttachmentRouter = resourceRouter(ticketAttachmentResource);

export const ticketAttachmentDownloadRouter = attachmentDownloadRoute('/attachment', TicketAttachment);
