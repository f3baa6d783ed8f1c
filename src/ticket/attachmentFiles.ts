import { extname } from 'node:path';
import type { Transaction } from 'sequelize';
import { config } from '../config';
import { TicketAttachment } from '../db/models';
import { ValidationError } from '../errors';
import { characters, fileBaseName, sizeLimit } from '../lib/validation';
import { cleanFileName, put } from '../storage/uploads';
import type { TicketSettings } from './ticketSettings';

/** A file to attach: its name and its bytes (decoded). */
export interface AttachmentInput {
  filename: string;
  contents: Buffer;
}

/**
 * The files may be stored: each of an allowed type (the `allowed_files` ticket setting) and within
 * ATTACHMENT_MAX_BYTES, all together within ATTACHMENTS_MAX_BYTES. Else a 422 naming the file, and
 * nothing is written: callers check before they write anything.
 */
export function assertAttachments(items: AttachmentInput[], settings: Pick<TicketSettings, 'allowedExtensions'>): void {
  const { maxFileBytes, maxRequestBytes } = config().attachments;
  let total = 0;
  items.forEach((item, i) => {
    // The name as stored, bidi controls stripped: `..\u202E` is `..`, no name.
    const name = item.filename === undefined || item.filename === null ? null : fileBaseName(cleanFileName(item.filename));
    if (!name) throw new ValidationError(`The attachment.${i}.filename field is required.`);
    // Characters as the varchar(255) utf8mb4 column counts them: an emoji is one, not two UTF-16 units.
    if (characters(name) > 255) throw new ValidationError(`The attachment.${i}.filename may not be greater than 255 characters.`);
    if (!item.contents?.length) throw new ValidationError(`The attachment.${i}.contents field is required.`);
    const allowed = settings.allowedExtensions;
    if (allowed && !allowed.includes(extname(name).slice(1).toLowerCase())) {
      throw new ValidationError(`The attachment.${i}.filename must be a file of type: ${allowed.join(', ')}.`);
    }
    if (item.contents.length > maxFileBytes) throw new ValidationError(`The attachment.${i} may not be greater than ${sizeLimit(maxFileBytes)}.`);
    total += item.contents.length;
  });
  if (total > maxRequestBytes) throw new ValidationError(`The attachments may not be greater than ${sizeLimit(maxRequestBytes)} in total.`);
}

/** Stores each file (once per content) and attaches it to the message under its name. */
export async function storeAttachments(ticketId: number, messageId: number, items: AttachmentInput[], transaction: Transaction): Promise<TicketAttachment[]> {
  const out: TicketAttachment[] = [];
  for (const item of items) {
    const name = cleanFileName(item.filename);
    const upload = await put(item.contents, name, transaction);
    out.push(await TicketAttachment.create({ ticket_id: ticketId, message_id: messageId, upload_hash: upload.hash, original_name: name }, { transaction }));
  }
  return out;
}
