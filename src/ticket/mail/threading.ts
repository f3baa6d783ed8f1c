import { randomBytes } from 'node:crypto';
import type { Transaction } from 'sequelize';
import { config } from '../../config';
import { now } from '../../db/entity';
import { MailMessageId, type Brand } from '../../db/models';
import { MESSAGE_TYPE } from '../../db/models/TicketMessage';
import { select } from '../../db/select';
import type { MailAudience, MailDirection } from '../../db/models/MailMessageId';

/**
 * How the mails of a ticket stay one thread, in the users' mail clients and for the mailbox
 * worker that files replies:
 *
 * - every mail gets a Message-ID on the brand's domain that names its ticket and message:
 *   `<t123.m456.r<16 hex>@support.example.com>` (`.m456` only for a mail about a message);
 * - every Message-ID sent is stored (`mail_message_ids`, direction `out`; the mailbox worker
 *   stores what it imports as `in`), so a reply naming one in In-Reply-To or References is filed
 *   into its ticket without trusting anything the sender wrote;
 * - every stored id has its audience (`user`: the ticket's user and CC addresses; `cc`: the CC
 *   addresses alone; `owner`: the ticket's user alone; `operator:<id>`: one operator; `forward`: a
 *   forward's recipients), and a later mail carries
 *   `In-Reply-To: <the latest id of its audience>` and `References: <the first> <the latest>`, so
 *   that nobody's mail names mails they never had; a forward names none (a conversation of its own
 *   with a third party, as a mail client's Forward is), and an answer to it is told by the audience
 *   of the mail it answers directly (answeredMail);
 * - the subject carries the ticket number as `[#<number>]`, for clients that thread by subject and
 *   for replies whose headers were lost.
 *
 * Ids are stored and compared without their angle brackets.
 */

/** A Message-ID's longest stored form (the column's length). */
export const MESSAGE_ID_MAX = 255;

const DOMAIN = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?)*$/;

const hostOf = (url: string | null | undefined): string | null => {
  if (!url) return null;
  try {
    return new URL(url).hostname || null;
  } catch {
    return null;
  }
};

/** The domain of a brand's Message-IDs: its system_url's host, else its default_email's domain, else APP_URL's host. */
export function mailDomain(brand: Pick<Brand, 'system_url' | 'default_email'>): string {
  const candidates = [hostOf(brand.system_url), brand.default_email?.split('@').pop() ?? null, hostOf(config().appUrl)];
  return candidates.find((c): c is string => !!c && DOMAIN.test(c))?.toLowerCase() ?? 'localhost';
}

export interface MessageIdParts {
  ticketId: number;
  /** The ticket message the mail is about, when it is about one. */
  messageId: number | null;
}

/**
 * A new Message-ID (without brackets). `unique` is what makes it unique: the mail job passes its
 * outbox entry's random key, so a retried send reuses the id (receivers drop the duplicate).
 */
export function newMessageId(parts: MessageIdParts, domain: string, unique: string = randomBytes(8).toString('hex')): string {
  return `t${parts.ticketId}${parts.messageId ? `.m${parts.messageId}` : ''}.r${unique}@${domain}`;
}

const OURS = /^t(\d{1,10})(?:\.m(\d{1,10}))?\.r([a-z0-9]{1,64})@([A-Za-z0-9.-]{1,253})$/;

/** The ticket and message a Message-ID of ours names; null for another shape. (Trust it only when stored.) */
export function parseMessageId(id: string): MessageIdParts | null {
  const m = OURS.exec(id);
  return m ? { ticketId: Number(m[1]), messageId: m[2] ? Number(m[2]) : null } : null;
}

/** `<abc@host>` → `abc@host`; null when nothing usable is left or it is too long to store. */
export function normaliseMessageId(raw: string | null | undefined): string | null {
  const id = (raw ?? '').trim().replace(/^<+/, '').replace(/>+$/, '').trim();
  return id && id.length <= MESSAGE_ID_MAX && !/[\s<>]/.test(id) ? id : null;
}

/** The ids of a References (or In-Reply-To) header, in order, without brackets. */
export function parseReferences(header: string | null | undefined): string[] {
  const ids = (header ?? '').match(/<[^<>\s]+>/g) ?? [];
  return [...new Set(ids.map((i) => normaliseMessageId(i)).filter((i): i is string => !!i))];
}

export interface Thread {
  /** The latest Message-ID of the audience. */
  inReplyTo?: string;
  /** The first and the latest (once when they are the same). */
  references: string[];
}

/** The audience of one operator's mail. */
export const operatorAudience = (operatorId: number): MailAudience => `operator:${operatorId}`;

/**
 * The audiences whose mails an audience's recipients all had, where that is not its own alone:
 * the mails to the ticket's user and CC addresses (`user`) reached both the user alone (`owner`:
 * a feedback request) and the CC addresses alone (`cc`: the copy of the user's reply). A `user`
 * mail names neither of those: its CC addresses never had the user's own, its user never had the
 * CC addresses' copies. The copy of a reply by someone else than the ticket's user (`others`: to
 * the user and the CC addresses but its author) names the `user` mails only, and none names it:
 * its author never had it, and another person's copy left out someone else.
 */
const NAMED: Partial<Record<MailAudience, MailAudience[]>> = { owner: ['owner', 'user'], cc: ['cc', 'user'], others: ['user'] };

/**
 * The thread a new mail of the ticket joins: the first and latest stored ids (either direction) of
 * its audience (or the audiences it names, NAMED), and of none (ids stored before audiences were),
 * except `own`; a forward joins none. One statement, each part a range of the thread index
 * (ticket, audience) read in id order.
 */
export async function threadOf(ticketId: number, audience: MailAudience, own?: string, transaction?: Transaction): Promise<Thread> {
  if (audience === 'forward') return { references: [] };
  // The index named: on a small table the optimizer would walk the primary key for `ORDER BY id LIMIT 1`.
  const part = (who: string, order: 'ASC' | 'DESC') => `(SELECT id, message_id FROM mail_message_ids
    FORCE INDEX (mail_message_ids_thread) WHERE ticket_id = :ticketId AND ${who} AND message_id <> :own ORDER BY id ${order} LIMIT 1)`;
  const named = NAMED[audience] ?? [audience];
  const whose = [...named.map((_, i) => `audience = :named${i}`), 'audience IS NULL'];
  const rows = await select<{ id: number; message_id: string }>(
    whose.flatMap((who) => [part(who, 'ASC'), part(who, 'DESC')]).join(' UNION ALL '),
    { ticketId, own: own ?? '', ...Object.fromEntries(named.map((a, i) => [`named${i}`, a])) }, { transaction },
  );
  if (!rows.length) return { references: [] };
  const byId = [...rows].sort((a, b) => Number(a.id) - Number(b.id));
  const [first, latest] = [byId[0].message_id, byId[byId.length - 1].message_id];
  return { inReplyTo: latest, references: [...new Set([first, latest])] };
}

export interface StoredMessageId {
  messageId: string;
  ticketId: number;
  ticketMessageId?: number | null;
  direction: MailDirection;
  audience: MailAudience;
}

/** Stores a Message-ID of a ticket; storing one twice (a retried send) keeps the first. */
export async function recordMessageId(values: StoredMessageId, transaction?: Transaction): Promise<void> {
  await recordMessageIds([values], transaction);
}

/** recordMessageId for several (the mails of an imported batch): one statement. */
export async function recordMessageIds(values: StoredMessageId[], transaction?: Transaction): Promise<void> {
  if (!values.length) return;
  const at = now();
  await MailMessageId.bulkCreate(values.map((v) => ({
    message_id: v.messageId, ticket_id: v.ticketId, ticket_message_id: v.ticketMessageId ?? null, direction: v.direction, audience: v.audience, created_at: at,
  })), { ignoreDuplicates: true, transaction });
}

/** The stored mail another mail answers directly: whose conversation it is, and whether it is about a note. */
export interface AnsweredMail {
  ticketId: number;
  audience: MailAudience | null;
  /** It is about a note (an operator's notification of a colleague's note, or of an answer to a forward). */
  note: boolean;
}

/**
 * The stored mail a mail answers directly: its In-Reply-To when stored, else the last stored id of
 * its References (`ids`: References, then In-Reply-To, as the mail has them; a reply quotes the
 * References of the mail it answers, which may name other mails of the ticket). Null when none is
 * stored. One statement.
 */
export async function answeredMail(ids: string[], transaction?: Transaction): Promise<AnsweredMail | null> {
  // Latest first, each id at its last place (In-Reply-To is often the last of References too).
  const latestFirst = [...new Set([...ids].reverse())].slice(0, 100);
  if (!latestFirst.length) return null;
  const rows = await select<{ message_id: string; ticket_id: number; audience: MailAudience | null; type: number | null }>(
    `SELECT m.message_id, m.ticket_id, m.audience, tm.type FROM mail_message_ids m LEFT JOIN ticket_messages tm ON tm.id = m.ticket_message_id
      WHERE m.message_id IN (?)`, [latestFirst], { transaction },
  );
  const byId = new Map(rows.map((r) => [r.message_id, r]));
  const answered = latestFirst.map((id) => byId.get(id)).find((r) => r !== undefined);
  return answered ? { ticketId: Number(answered.ticket_id), audience: answered.audience, note: answered.type === MESSAGE_TYPE.NOTE } : null;
}

/**
 * The ticket a reply belongs to by its In-Reply-To and References (ids without brackets): the
 * ticket of the mail it answers (answeredMail), or null. For the mailbox worker, which then follows
 * `merged_into_id` and leaves a trashed ticket alone.
 */
export async function ticketOfReferences(ids: string[], transaction?: Transaction): Promise<number | null> {
  return (await answeredMail(ids, transaction))?.ticketId ?? null;
}

/** The subject with the ticket number in it: the template's subject when it has `[#<number>]`, else `[#<number>] <subject>`. */
export function subjectWithNumber(subject: string, number: string): string {
  const tag = `[#${number}]`;
  if (subject.includes(tag)) return subject;
  return subject ? `${tag} ${subject}` : tag;
}
