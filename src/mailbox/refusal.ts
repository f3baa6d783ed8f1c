import type { Transaction } from 'sequelize';
import { Brand, DepartmentEmail, IncomingMail } from '../db/models';
import { Joi } from '../lib/validation';
import { frame, ownMailHeaders } from '../mail/compose';
import { mailJobOptions } from '../mail/retries';
import { transportFor } from '../mail/transports';
import type { EventPayloads } from '../events';
import { defineJob } from '../queue/jobs';
import { enqueue } from '../queue/outbox';
import { QUEUES } from '../queue/names';
import { withoutOwnAddresses } from '../ticket/mail/recipients';
import { oneLine } from '../ticket/mail/render';

/**
 * A mail the mailbox worker refused before reading it (too large) is answered, so its sender is
 * not left waiting for a ticket that will never come: a short non-delivery notice from the
 * mailbox's address, saying why, threaded on the refused mail. It goes through the outbox and the
 * mail worker like every mail. Never to the null sender, an automatic mail or one of our own
 * addresses (./ingest.ts decides): two systems must not bounce mail at each other.
 */

/** The payload names the ledger line only: the sender, subject and reason are read from it. */
export const mailRefusal = defineJob<{ incomingMailId: number }>({
  name: 'mailbox.refusal',
  queue: QUEUES.mail,
  schema: Joi.object({ incomingMailId: Joi.number().integer().min(1).required() }),
  options: mailJobOptions,
  async handle({ incomingMailId }) {
    const line = await IncomingMail.findByPk(incomingMailId);
    if (!line?.from_address) return { skipped: 'the ledger line or its sender is gone' };
    const mailbox = line.department_email_id ? await DepartmentEmail.findByPk(line.department_email_id) : null;
    const brand = mailbox ? await Brand.findByPk(mailbox.brand_id) : null;
    if (!mailbox || !brand) return { skipped: 'the mailbox or its brand no longer exists' };
    const [to] = await withoutOwnAddresses([line.from_address]);
    if (!to) return { skipped: 'the sender is one of our own addresses' };
    const subject = oneLine(line.subject ?? '') || '(no subject)';
    const { html, text } = frame(brand, {
      paragraphs: [
        `Your mail "${subject}" to ${mailbox.address} was not accepted, and no ticket was opened for it.`,
        `Reason: ${line.reason ?? 'refused'}`,
        'Please send it again without the large files (share them as a link, or in several smaller mails).',
      ],
    });
    const info = await transportFor(brand).sendMail({
      from: { name: brand.name, address: mailbox.address },
      to,
      subject: `Not delivered: ${subject}`.slice(0, 255),
      html,
      text,
      inReplyTo: line.message_id ? `<${line.message_id}>` : undefined,
      references: line.message_id ? [`<${line.message_id}>`] : undefined,
      // An automatic reply (RFC 3834), marked as ours should it come back.
      headers: ownMailHeaders(mailbox.address, 'auto-replied'),
    });
    return { messageId: info.messageId, accepted: info.accepted };
  },
});

/** `mailbox.unread_refused`: the non-delivery notice to the sender (ingest.ts already ruled out bounces, automatic mail and our own addresses). */
export async function onUnreadRefused({ incomingMailId }: EventPayloads['mailbox.unread_refused'], t: Transaction): Promise<void> {
  await enqueue(t, mailRefusal, { incomingMailId });
}
