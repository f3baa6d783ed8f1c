import { TicketAttachment, User, type TicketMessage, type Upload } from '../../db/models';
import { MESSAGE_TYPE } from '../../db/models/TicketMessage';
import { loadById, loadMany } from '../../db/load';
import { USER_SUMMARY_FIELDS, serializeUserSummary } from '../../user/people/presenter';
import { loadUploads } from '../../storage/uploads';
import { serializeTicketAttachment } from '../attachment';
import { jsonList } from '../common';

/** A message's own columns on the wire, in the spec's order. */
export const MESSAGE_FIELDS = [
  'id', 'ticket_id', 'channel_id', 'user_id', 'user_ip_address', 'by', 'type', 'text', 'is_draft', 'social_id', 'created_at', 'updated_at',
] as const;

export interface MessageRelations {
  users: Map<number, User>;
  attachments: Map<number, TicketAttachment[]>;
  uploads: Map<string, Upload>;
}

/**
 * What the write that added a message knows of it (addMessage): its author, and whether it has
 * no attachments.
 */
export interface KnownMessage {
  author: User;
  unattached: boolean;
}

/**
 * The authors and attachments of a page of messages: three statements whatever its size.
 * `known` (by message id): what is not read again.
 */
export async function loadMessageRelations(messages: TicketMessage[], known?: ReadonlyMap<number, KnownMessage>): Promise<MessageRelations> {
  const [users, attachments] = await Promise.all([
    loadById(User, messages.filter((m) => !known?.has(m.id)).map((m) => m.user_id), { attributes: [...USER_SUMMARY_FIELDS] }),
    loadMany(TicketAttachment, 'message_id', messages.filter((m) => !known?.get(m.id)?.unattached).map((m) => m.id)),
  ]);
  for (const [, k] of known ?? []) users.set(k.author.id, k.author);
  const uploads = await loadUploads([...attachments.values()].flat().map((a) => a.upload_hash));
  return { users, attachments, uploads };
}

/** A forward's `extra`: the recipients (arrays, or null for none), its subject and the address it goes out from. */
function forwardExtra(stored: string | null): Record<string, any> {
  let extra: Record<string, any> = {};
  try {
    extra = stored ? JSON.parse(stored) : {};
  } catch {
    extra = {};
  }
  const list = (v: unknown) => (Array.isArray(v) && v.length ? v : null);
  return {
    to_address: list(extra.to_address), cc_address: list(extra.cc_address), bcc_address: list(extra.bcc_address),
    subject: extra.subject ?? null, from_address: extra.from_address ?? null,
  };
}

/**
 * A message as the message and forward resources show it; `user` is its author (null once
 * deleted). One object literal of fixed shape, not spreads of picked fields (as serializeTicket:
 * a page presents fifty of these). `extra` is a forward's only: undefined otherwise, which the
 * JSON answer leaves out.
 */
export function serializeMessage(m: TicketMessage, rel: MessageRelations): Record<string, any> {
  const user = m.user_id ? rel.users.get(m.user_id) : undefined;
  return {
    // MESSAGE_FIELDS, in that order.
    id: m.id,
    ticket_id: m.ticket_id,
    channel_id: m.channel_id ?? null,
    user_id: m.user_id ?? null,
    user_ip_address: m.user_ip_address ?? null,
    by: m.by ?? null,
    type: m.type,
    text: m.text ?? null,
    is_draft: m.is_draft ?? null,
    social_id: m.social_id ?? null,
    created_at: m.created_at,
    updated_at: m.updated_at,
    pinned: m.pinned,
    original_ticket_id: m.original_ticket_id,
    cc: jsonList(m.cc),
    extra: m.type === MESSAGE_TYPE.FORWARD ? forwardExtra(m.extra) : undefined,
    user: user ? serializeUserSummary(user) : null,
    attachments: (rel.attachments.get(m.id) ?? []).map((a) => serializeTicketAttachment(a, rel.uploads.get(a.upload_hash))),
  };
}
