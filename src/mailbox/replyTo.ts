import type { Transaction } from 'sequelize';
import { config } from '../config';
import { ownAddresses } from './lookups';
import type { IncomingMessage } from './parse';

/**
 * SupportPal's "Prioritise Reply-To" (MAIL_PRIORITISE_REPLY_TO, off by default): a mail whose
 * Reply-To names someone other than its From is that person's. A web form's mail comes From the
 * site and has the visitor in Reply-To; without this, every visitor's ticket would belong to the
 * site's address. The Reply-To then decides who opens or answers the ticket, and whether that is
 * its user or a CC; the From stays in `headerFrom` (and in the ledger). Never a Reply-To that is
 * one of our own addresses. The loop and spam checks have read the From as written before this.
 */
export async function withReplyToSender(mail: IncomingMessage, t: Transaction): Promise<IncomingMessage> {
  const { replyTo, from } = mail;
  if (!config().mailbox.prioritiseReplyTo || !replyTo || !from || replyTo.address === from.address) return mail;
  if ((await ownAddresses([replyTo.address], t)).length) return mail;
  return { ...mail, from: replyTo, headerFrom: from };
}
