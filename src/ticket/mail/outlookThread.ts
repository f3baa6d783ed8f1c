import { createHash, randomBytes } from 'node:crypto';
import type { Ticket } from '../../db/models';
import { stripSubjectPrefixes, withoutTicketTags } from '../../mailbox/subject';

/**
 * Outlook and Exchange group a conversation by `Thread-Topic` and `Thread-Index`
 * (PidTagConversationIndex, [MS-OXOMSG] 2.2.1.3), not only by In-Reply-To/References. Every mail
 * of a ticket carries the same topic and an index whose 22-byte header (reserved byte, the
 * ticket's creation time as the five high bytes of a FILETIME, a GUID derived from the ticket)
 * is the ticket's; every mail after the first adds one 5-byte child block (time since the
 * ticket was opened), so they sort under it.
 */

const FILETIME_EPOCH_OFFSET = 116444736000000000n; // 100 ns intervals from 1601 to 1970

const filetime = (unixSeconds: number) => BigInt(unixSeconds) * 10_000_000n + FILETIME_EPOCH_OFFSET;

/** The Thread-Topic: the subject without the ticket number and reply/forward prefixes. */
export function threadTopic(subject: string): string {
  return withoutTicketTags(stripSubjectPrefixes(subject).subject).slice(0, 255) || subject.slice(0, 255);
}

/** The Thread-Index (base64) of a mail of the ticket sent at `sentAt` (UNIX seconds); `first`: the ticket's first mail. */
export function threadIndex(ticket: Pick<Ticket, 'id' | 'created_at' | 'token'>, sentAt: number, first: boolean): string {
  const start = filetime(ticket.created_at);
  const header = Buffer.alloc(22);
  header[0] = 0x01;
  for (let i = 0; i < 5; i++) header[1 + i] = Number((start >> BigInt(56 - 8 * i)) & 0xffn);
  createHash('sha256').update(`thread-index:${ticket.id}:${ticket.token ?? ''}`).digest().copy(header, 6, 0, 16);
  if (first) return header.toString('base64');
  // Child block: code bit 0, then bits 18..48 of the time difference, 4 random bits, a 4-bit sequence.
  const delta = (filetime(Math.max(sentAt, ticket.created_at)) - start) >> 18n;
  const bits = ((delta & 0x7fffffffn) << 8n) | BigInt((randomBytes(1)[0] & 0xf0) | 0x01);
  const child = Buffer.alloc(5);
  for (let i = 0; i < 5; i++) child[i] = Number((bits >> BigInt(32 - 8 * i)) & 0xffn);
  return Buffer.concat([header, child]).toString('base64');
}
