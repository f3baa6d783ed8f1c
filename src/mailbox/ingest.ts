import { Op, UniqueConstraintError, type Transaction } from 'sequelize';
import { runAs } from '../audit/actor';
import { config } from '../config';
import { now } from '../db/entity';
import { DepartmentEmail, MailDelivery, SpamRule, Ticket, Department } from '../db/models';
import type { IncomingDecision } from '../db/models/IncomingMail';
import { sequelize } from '../db/sequelize';
import { onceInTransaction, transaction } from '../db/transaction';
import { emit, withoutEvents, type MailRefusal } from '../events';
import { ValidationError } from '../errors';
import { logger } from '../logger';
import { spamMatch } from '../core/spam';
import { plainTextAsRichText } from '../content/html';
import { operatorAudience, ticketOfReferences, recordMessageId } from '../ticket/mail/threading';
import { threadTarget } from './threadTarget';
import { addMessage } from '../ticket/messages/service';
import { hasAddressAmong } from '../ticket/common';
import { cachedTicketSettings, type TicketSettings } from '../ticket/ticketSettings';
import { userForAddress } from '../ticket/tickets/people';
import { MESSAGE_TYPE } from '../db/models/TicketMessage';
import type { AttachmentInput } from '../ticket/attachmentFiles';
import { automaticReason, bounceFacts, bounceReason } from './classify';
import { floodReason, openingFloodReason } from './flood';
import { withReplyToSender } from './replyTo';
import { decided, keepsImportKey, RejectedImport, type Decision } from './decision';
import { claimLines, settleLines, type LedgerLine } from './ledger';
import { errorText, isTransientDbError } from '../db/errors';
import { isOpening, PendingOpenings, type Opening } from './opening';
import { MailboxChanged } from './pollGuard';
import { importedAs, noteImported, ownAddresses, ownLoopMarkers, primeBatch, sentByUs, xLoopAddresses } from './lookups';
import { headerBlock, htmlAlternativeText, parseMail, type IncomingMessage } from './parse';
import { splitSubaddress } from '../ticket/mail/replyAddress';

/**
 * Turns one fetched mail into a ticket, a reply, or a recorded refusal, and writes its line of
 * the ingestion ledger (`incoming_mails`). The rules, in order:
 *
 * 1. Too large, unreadable, or without a From: rejected.
 * 2. Seen before (its sender and Message-ID, else a hash of the raw mail, held by the ledger line of a mail
 *    imported or decided for good: every decision but `error`, keepsImportKey): a duplicate,
 *    the mail too large included. Nothing is done again: a refusal is not answered twice.
 * 3. A delivery report (multipart/report, null sender, MAILER-DAEMON): a bounce. The mail it
 *    reports on, when it is one of ours, has its delivery marked bounced. Nothing is imported.
 * 4. Mail from one of our own department addresses, carrying our X-Loop marker, or bearing a
 *    Message-ID we sent: a loop. Nothing is imported.
 * 5. Spam rules with `event_message` (content: subject and text; sender: the address): spam.
 * 6. Threading (./threadTarget.ts): the ticket's own Message-IDs in In-Reply-To/References (a
 *    sender not yet on the ticket joins it as a CC; a forward joins only from someone on it); the
 *    sub-address of a recipient (`support+t12-…@`); a ticket mail forwarded as an attachment; the
 *    `[#number]` in the subject, accepted only from the ticket's user, an address copied on it, or
 *    an operator. A merged ticket leads to its target; a trashed one is left alone (the mail opens
 *    a new ticket). A reply to a locked ticket, or to a department that takes no replies by mail,
 *    is refused with a notice to the sender. An operator's mail is their reply only when it
 *    answers, by its headers, a mail of their own conversation (a From is easy to fake); else, and
 *    when it is automatic, it is their note.
 * 7. Otherwise a new ticket in the department of the address the mail was sent to (the polled
 *    mailbox's own department with `consume_all`), its sender found or created as a user. The
 *    new tickets of a transaction's mails are opened together (./opening.ts: one INSERT per kind
 *    of row, no savepoint), before any later mail could see them or writes anything itself.
 *
 * Automatic mails (out-of-office replies, also told by their subject, list mail) are imported but
 * notify nobody, change no status and copy no one, so two auto-responders can never answer each
 * other. So is a reply past the flood limit
 * of its sender and ticket (./flood.ts: MAIL_FLOOD_LIMIT per MAIL_FLOOD_WINDOW_SECONDS), for
 * auto-responders that do not say what they are. Files that `allowed_files` or the
 * size limits refuse are left out, and the sender is told when the department maps
 * `user_email_attachmentrejected`. A mail whose To and Cc name no department address (the help
 * desk had it in Bcc) copies no one either.
 *
 * The import, its ledger line and `advance` (the mailbox's cursor) commit in one transaction: a
 * worker killed at any point either imported the mail and moved past it, or did neither. The
 * ledger's unique `import_key` makes the same mail, fetched twice or from two mailboxes at once,
 * import once. A refusal by the ticket service of a mail's new ticket rolls its transaction back
 * and is recorded in one of its own (./decision.ts, RejectedImport). A dry run takes every
 * decision inside a transaction that is rolled back.
 */

export interface MailSource {
  /** The mailbox the mail was fetched from (null: posted to the dry run without one). */
  departmentEmail: DepartmentEmail | null;
  /** IMAP `<uidvalidity>:<uid>` or the POP3 UIDL. */
  remoteUid?: string | null;
}

export interface IngestOptions {
  dryRun?: boolean;
  /**
   * Work that must commit with the mail's ledger line (the IMAP cursor), run first in its
   * transaction; a MailboxChanged it throws rolls the mail back and ends the call.
   */
  advance?: (t: Transaction) => Promise<void>;
  /**
   * The poll's check that its mailbox still has the settings it began with (./pollGuard.ts), run
   * before a failed import is recorded: a mailbox deleted or changed meanwhile (a foreign key naming
   * it fails the import) throws MailboxChanged, and nothing is recorded.
   */
  stillPolled?: () => Promise<void>;
  /** The size the server announced, for a mail too large to be downloaded at all (`raw` is then empty). */
  declaredSize?: number;
}

export interface IngestResult {
  decision: IncomingDecision;
  reason: string | null;
  ticketId: number | null;
  messageId: number | null;
  /** The ledger line (null for a dry run). */
  ledgerId: number | null;
  /** The mail's Message-ID, or null. */
  mailMessageId: string | null;
  from: string | null;
  subject: string | null;
}

class DryRunRollback extends Error {
  constructor(readonly result: Decision) {
    super('dry run');
  }
}

/** The ledger's text columns hold so much. */
const clip = (s: string | null | undefined, n: number) => (s ? s.slice(0, n) : null);

export async function ingestMail(raw: Buffer, source: MailSource, options: IngestOptions = {}): Promise<IngestResult> {
  // Changes the mail makes to tickets are the mailbox's (the audit's actor).
  return runAs({ type: 'mailbox', id: source.departmentEmail?.id ?? null, channel: 'email' }, () => ingest(raw, source, options));
}

/** A mail parsed, ready to be decided and imported in a transaction. */
interface Prepared {
  mail: IncomingMessage | null;
  /** Its ledger line, with the decision. */
  line(d: Decision, importKey: string | null): LedgerLine;
  result(d: Decision, ledgerId: number | null): IngestResult;
  /** The import key the mail's ledger line claims first (null: it cannot be imported, or was already). */
  claimable(t: Transaction): Promise<string | null>;
  /** The line that claims `key` until the decision is written into it. */
  claim(key: string | null): LedgerLine;
  /**
   * Rules 1-7 in `t`: the decision, or the ticket the mail opens (opened later, with those of the
   * other mails of the transaction: ./opening.ts). `beforeWrite` runs before the mail writes
   * anything of its own.
   */
  decide(t: Transaction, beforeWrite: () => Promise<void>): Promise<Decision | Opening>;
  /**
   * What follows the decision (the mail's ledger line being `ledgerId`, null in a dry run, which
   * claimed `key`): the key noted as held, a mail refused unread answered.
   */
  conclude(t: Transaction, d: Decision, ledgerId: number | null, key: string | null, beforeWrite: () => Promise<void>): Promise<Decision>;
}

async function prepare(raw: Buffer, source: MailSource, options: IngestOptions): Promise<Prepared> {
  let mail: IncomingMessage | null = null;
  let early: Decision | null = null;
  const size = Math.max(raw.length, options.declaredSize ?? 0);
  if (size > config().mailbox.maxMessageBytes) {
    early = decided('rejected', `The mail is ${size} bytes, over the limit of ${config().mailbox.maxMessageBytes} (MAILBOX_MAX_MESSAGE_BYTES).`, { answer: true });
    // Its headers only (all an IMAP poll downloads of it): who to tell, and whether to tell them.
    mail = await parseMail(headerBlock(raw)).catch(() => null);
  } else {
    try {
      mail = await parseMail(raw);
    } catch (err) {
      early = decided('error', `The mail could not be parsed: ${(err as Error).message}`.slice(0, 1000));
    }
  }

  const line = (d: Decision, importKey: string | null): LedgerLine => ({
    departmentEmailId: source.departmentEmail?.id ?? null, remoteUid: clip(source.remoteUid, 128),
    messageId: mail?.messageId ?? null, importKey, fromAddress: clip(mail?.from?.address, 255),
    subject: clip(mail?.subject, 998), decision: d.decision, reason: clip(d.reason, 1024), ticketId: d.ticketId ?? null,
    ticketMessageId: d.messageId ?? null, size,
  });

  const result = (d: Decision, ledgerId: number | null): IngestResult => ({
    decision: d.decision, reason: d.reason, ticketId: d.ticketId ?? null, messageId: d.messageId ?? null, ledgerId,
    mailMessageId: mail?.messageId ?? null, from: mail?.from?.address ?? null, subject: mail?.subject ?? null,
  });

  // The key this mail is decided under, unless a line holds it already (a duplicate).
  const claimable = async (t: Transaction) => (mail?.from && !(await importedAs(mail.key, t)) ? mail.key : null);
  const claim = (key: string | null) => line(decided('error', 'The import did not finish.'), key);

  const decide = async (t: Transaction, beforeWrite: () => Promise<void>): Promise<Decision | Opening> => {
    if (!mail) return early!;
    // A mail refused before it was read (too large), delivered again: not refused (and answered) twice.
    if (early) return (mail.from ? await duplicateOf(mail, t) : null) ?? early;
    const d = await decideBeforeImport(mail, t, beforeWrite);
    return d.decision === 'new_ticket' ? importMail(await withReplyToSender(mail, t), source, t, beforeWrite) : d;
  };

  const conclude = async (t: Transaction, d: Decision, ledgerId: number | null, key: string | null, beforeWrite: () => Promise<void>): Promise<Decision> => {
    if (options.dryRun) throw new DryRunRollback(d);
    if (key && keepsImportKey(d)) await noteImported(key, { id: ledgerId!, decision: d.decision, ticketId: d.ticketId ?? null, messageId: d.messageId ?? null }, t);
    if (d.answer && mail && (await mayAnswer(mail, t))) {
      await beforeWrite();
      await emit(t, 'mailbox.unread_refused', { incomingMailId: ledgerId! });
    }
    return d;
  };
  return { mail, line, result, claimable, claim, decide, conclude };
}

/**
 * Imports mails of one mailbox (in their order) in `t`, with the ledger lines claimed first (one
 * statement: the import keys under their unique index, so a second import of the same mail, by
 * another mailbox's poll at the same moment, waits there before it has done any work; a key is
 * claimed by the first mail that has it, a later copy taking it only when the first was not
 * imported), the mails decided in order, the tickets they open opened together (./opening.ts: no
 * savepoint, one statement per kind of row), and the decisions written into the lines (one
 * statement); `advance` runs first (the poll's lock on its mailbox, ./pollGuard.ts: a settings
 * change waits for the transaction instead of meeting it in a deadlock). A dry run claims and
 * writes no line (its transaction is rolled back by conclude).
 */
async function importAll(
  prepared: Prepared[], source: MailSource, t: Transaction, options: IngestOptions,
): Promise<Array<{ d: Decision; ledgerId: number | null }>> {
  if (!options.dryRun) await options.advance?.(t);
  // What the mails will ask for, read in one statement per kind.
  await primeBatch(prepared.flatMap((p) => (p.mail ? [p.mail] : [])), source.departmentEmail?.brand_id ?? null, t);
  let ids: Array<number | null> = prepared.map(() => null);
  // The key each line claimed: the first mail of the batch with a key takes it.
  const keys: Array<string | null> = prepared.map(() => null);
  if (!options.dryRun) {
    const claimed = new Set<string>();
    for (const [i, p] of prepared.entries()) {
      const key = await p.claimable(t);
      keys[i] = key && !claimed.has(key) ? key : null;
      if (key) claimed.add(key);
    }
    ids = await claimLines(prepared.map((p, i) => p.claim(keys[i])), t);
  }
  const decisions: Decision[] = [];
  const openings = new PendingOpenings(t);
  for (const [i, p] of prepared.entries()) {
    if (p.mail && openings.needsFlush(p.mail)) await openings.flush();
    const outcome = await p.decide(t, openings.flush);
    if (isOpening(outcome)) openings.add(outcome, async (d) => { decisions[i] = await p.conclude(t, d, ids[i], keys[i], openings.flush); });
    else decisions[i] = await p.conclude(t, outcome, ids[i], keys[i], openings.flush);
  }
  await openings.flush();
  if (!options.dryRun) {
    await settleLines(prepared.map((p, i) => ({ id: ids[i]!, line: p.line(decisions[i], keepsImportKey(decisions[i]) ? keys[i] : null) })), t);
  }
  return decisions.map((d, i) => ({ d, ledgerId: ids[i] }));
}

/** ingestMail's work: one mail in its own transaction (importAll), and what its failures are recorded as. */
async function ingest(raw: Buffer, source: MailSource, options: IngestOptions): Promise<IngestResult> {
  const p = await prepare(raw, source, options);
  const { mail, result } = p;
  try {
    const [{ d, ledgerId }] = await transaction((t) => (options.dryRun
      ? withoutEvents(t, () => importAll([p], source, t, options))
      : importAll([p], source, t, options)));
    return result(d, ledgerId);
  } catch (err) {
    if (err instanceof DryRunRollback) return result(err.result, null);
    if (err instanceof RejectedImport && options.dryRun) return result(err.decision, null);
    if (options.dryRun) throw err;
    // A deadlock, a lock wait, a lost connection (after db/transaction.ts retried what it could):
    // nothing is recorded and the cursor stays before the mail, so the poll fails and the next one
    // takes the mail again. Recorded as an error, the mail would never be imported. Nor is anything
    // recorded for a mailbox changed or deleted during the poll: the poll stops.
    if (err instanceof MailboxChanged || isTransientDbError(err)) throw err;
    await options.stillPolled?.();
    if (err instanceof RejectedImport) return record(err.decision);
    if (!(err instanceof UniqueConstraintError) || !mail) return recordError(err as Error);
    // Another poll imported this mail a moment ago (the same mail in two mailboxes): the claim
    // waited on its key until that transaction ended, then failed.
    const { d, ledgerId } = await transaction(async (t) => {
      await options.advance?.(t);
      const d = await duplicateOf(mail, t) ?? decided('duplicate', 'The mail was imported by another poll at the same time.');
      const [ledgerId] = await claimLines([p.line(d, null)], t);
      return { d, ledgerId };
    });
    return result(d, ledgerId);
  }

  /** A decision taken in a transaction that was rolled back, recorded (and the mailbox moved past the mail) in one of its own. */
  async function record(d: Decision): Promise<IngestResult> {
    const ledgerId = await transaction(async (t) => {
      await options.advance?.(t);
      const [id] = await claimLines([p.line(d, null)], t);
      return id;
    });
    return result(d, ledgerId);
  }

  /**
   * An import that failed in a way no rule foresaw is recorded as an error, and the mailbox moves
   * past it (the mail stays in the mailbox for a person to look at): one bad mail never blocks
   * the others. When not even that can be written (the database is away), the poll fails. The
   * reason is the error's own words without the SQL statement (errorText).
   */
  async function recordError(err: Error): Promise<IngestResult> {
    const reason = errorText(err);
    logger.error({ mailbox: source.departmentEmail?.id, remoteUid: source.remoteUid, reason }, 'a mail could not be imported');
    try {
      return await record(decided('error', `The import failed: ${reason}`));
    } catch (failed) {
      throw failed instanceof MailboxChanged ? failed : err;
    }
  }
}

/** One mail of a batch: its raw bytes (or headers), where it came from, and the cursor's advance past it. */
export interface BatchMail {
  raw: Buffer;
  remoteUid: string;
  declaredSize?: number;
  /** Moves the mailbox's cursor past this mail; advances are monotonic (the last mail's covers the batch). */
  advance: (t: Transaction) => Promise<void>;
}

/**
 * Imports a batch of mails of one mailbox (in their order) in ONE transaction (importAll), with
 * what ingestMail does for each, and the cursor advanced past the last mail. A worker killed in
 * the middle of a batch imported none of it, and the next poll takes the batch again. The mails
 * are parsed before the transaction, at once. A mail that fails in a way no rule foresaw, a
 * refusal by the ticket service of one of the tickets it opens, or a key that another import
 * holds rolls the batch back, and the batch is then imported one mail per transaction
 * (ingestMail): the poison mail is recorded as an error (or its refusal) and the others still
 * import. A transient database error of one of those fails the whole call (the mails before it
 * are imported, their cursor advanced; the mail and those after it are not), as does a mailbox
 * changed or deleted during the poll (MailboxChanged: from an advance, or from `stillPolled`,
 * asked before a failure is taken for a mail's: ./pollGuard.ts).
 */
export async function ingestBatch(mails: BatchMail[], departmentEmail: DepartmentEmail, stillPolled?: () => Promise<void>): Promise<IngestResult[]> {
  if (!mails.length) return [];
  const actor = { type: 'mailbox' as const, id: departmentEmail.id, channel: 'email' as const };
  const one = (m: BatchMail) => ingestMail(m.raw, { departmentEmail, remoteUid: m.remoteUid }, { advance: m.advance, declaredSize: m.declaredSize, stillPolled });
  if (mails.length === 1) return [await one(mails[0])];
  return runAs(actor, async () => {
    const prepared = await Promise.all(mails.map((m) => prepare(m.raw, { departmentEmail, remoteUid: m.remoteUid }, { declaredSize: m.declaredSize })));
    try {
      const done = await transaction((t) => importAll(prepared, { departmentEmail }, t, { advance: mails[mails.length - 1].advance }));
      return prepared.map((p, i) => p.result(done[i].d, done[i].ledgerId));
    } catch (err) {
      // A mailbox changed or deleted during the poll: the poll stops (`stillPolled`, as ingestMail).
      if (err instanceof MailboxChanged) throw err;
      await stillPolled?.();
      logger.warn({ mailbox: departmentEmail.id, mails: mails.length, reason: errorText(err) }, 'a batch of mails failed: importing them one by one');
    }
    const results: IngestResult[] = [];
    for (const m of mails) results.push(await one(m));
    return results;
  });
}

/** A refused mail is answered unless it is a bounce, an automatic mail, or from one of our own addresses. */
async function mayAnswer(mail: IncomingMessage, t: Transaction): Promise<boolean> {
  return !!mail.from && !bounceReason(mail) && !automaticReason(mail) && !(await ownAddresses([mail.from.address], t)).length;
}

/** Parses and decides without importing or recording anything. */
export const dryRunMail = (raw: Buffer, source: MailSource) => ingestMail(raw, source, { dryRun: true });

/** Rules 1-5: what the mail is before anything is imported ('new_ticket' here means: go on and import it). */
async function decideBeforeImport(mail: IncomingMessage, t: Transaction, beforeWrite: () => Promise<void>): Promise<Decision> {
  if (!mail.from) return decided('rejected', mail.headers.has('from') ? 'The From header names no valid email address.' : 'From: header missing.');
  const duplicate = await duplicateOf(mail, t);
  if (duplicate) return duplicate;
  const bounce = bounceReason(mail);
  if (bounce) {
    await beforeWrite();
    return recordBounce(mail, bounce, t);
  }

  if ((await ownAddresses([mail.from.address], t)).length) return decided('loop', 'Loop detected - email sent from a department address.');
  if (mail.messageId && (await sentByUs(mail.messageId, t))) {
    return decided('loop', 'Loop detected - the mail is one the help desk sent.');
  }
  // Our own marker (every mail we send carries it): a mail of ours come back, by a list, an alias or a forward copied to us.
  const ours = await ownLoopMarkers(xLoopAddresses(mail), t);
  if (ours.length) return decided('loop', `Loop detected - the mail carries our X-Loop: ${ours.join(', ')}.`);

  const rules = await onceInTransaction(t, 'mailbox.spamRules', () => SpamRule.findAll({ where: { event_message: 1 }, transaction: t }));
  // The subject, the text and the HTML alternative (read only when a rule reads content: spam that
  // hides in it, behind a harmless text part), each a text of its own, as a comment's fields are:
  // a rule's `^` and `$` are the start and end of one of them.
  const contents = rules.some((r) => r.type !== 1 /* sender only */) ? [mail.subject, mail.text, htmlAlternativeText(mail)] : [];
  const rule = spamMatch(rules, [...contents.map((content) => ({ content })), { sender: mail.from!.address }]);
  if (rule) return decided('spam', `The request was blocked by spam rule '${rule.text}'.`);

  return decided('new_ticket', null);
}

async function duplicateOf(mail: IncomingMessage, t: Transaction): Promise<Decision | null> {
  const first = await importedAs(mail.key, t);
  if (!first) return null;
  const imported = first.decision === 'new_ticket' || first.decision === 'reply';
  return decided('duplicate', imported ? `Already imported (incoming mail ${first.id}).` : `Already received (incoming mail ${first.id}: ${first.decision}).`, {
    ticketId: first.ticket_id, messageId: first.ticket_message_id,
  });
}

/** Rule 3: a delivery report. The deliveries of the mails it names are marked bounced (each once). */
async function recordBounce(mail: IncomingMessage, why: string, t: Transaction): Promise<Decision> {
  const facts = bounceFacts(mail);
  const ticketId = await ticketOfReferences(facts.originalIds, t);
  let marked = 0;
  if (!facts.failed) return decided('bounce', `${why}, not of a failure (a read receipt or a delay notice): nothing marked bounced`, { ticketId });
  if (facts.originalIds.length) {
    const deliveries = await MailDelivery.findAll({
      where: { message_id: { [Op.in]: facts.originalIds.map((id) => `<${id}>`) }, status: { [Op.ne]: 'bounced' } }, transaction: t, lock: t.LOCK.UPDATE,
    });
    for (const delivery of deliveries) {
      await delivery.update({ status: 'bounced', error: facts.diagnostic, failed_at: now() }, { transaction: t });
      await emit(t, 'mail.bounced', { outboxId: delivery.outbox_id });
      marked++;
    }
  }
  const about = marked ? `; ${marked} delivery record(s) marked bounced` : '';
  return decided('bounce', `${why}${about}: ${facts.diagnostic}`, { ticketId });
}

/** A date in the mail's Date header, if it is a plausible one in the past; else now. */
const createdAtOf = (mail: IncomingMessage) => {
  const at = mail.date ? Math.floor(mail.date.getTime() / 1000) : 0;
  const current = now();
  return at > 0 && at <= current && at > current - 30 * 86400 ? at : current;
};

/** The files the ticket settings and the size limits allow, and the names of those they refuse. */
function sortFiles(mail: IncomingMessage, settings: TicketSettings): { allowed: AttachmentInput[]; refused: string[] } {
  const { maxFileBytes, maxRequestBytes } = config().attachments;
  const allowed: AttachmentInput[] = [];
  const refused: string[] = [];
  let total = 0;
  for (const f of mail.files) {
    const ext = f.filename.includes('.') ? f.filename.split('.').pop()!.toLowerCase() : '';
    const typeOk = settings.allowedExtensions === null || settings.allowedExtensions.includes(ext);
    if (!typeOk || f.contents.length > maxFileBytes || total + f.contents.length > maxRequestBytes || f.contents.length === 0) {
      refused.push(f.filename);
      continue;
    }
    total += f.contents.length;
    allowed.push({ filename: f.filename, contents: f.contents });
  }
  return { allowed, refused };
}

function namesOf(mail: IncomingMessage): { firstname: string | null; lastname: string | null } {
  const name = (mail.from?.name ?? '').replace(/["']/g, '').trim();
  if (!name || name.includes('@')) return { firstname: null, lastname: null };
  // "Lastname, Firstname" (Outlook's corporate form): one comma between two names.
  const inverted = /^([^,;]+),\s*([^,;]+)$/.exec(name);
  if (inverted) return { firstname: inverted[2].trim().slice(0, 255), lastname: inverted[1].trim().slice(0, 255) };
  const parts = name.split(/\s+/);
  return { firstname: parts[0].slice(0, 255), lastname: parts.slice(1).join(' ').slice(0, 255) || null };
}

/**
 * Addresses copied on the mail, without our own and the sender: they join the ticket's CC list
 * (without the ticket's user: the ticket services drop it, ccWithoutUser in src/ticket/common.ts).
 * None when no department address (nor a sub-address of one) is among the To and Cc: the help desk
 * had the mail in Bcc (or by an alias or a forward, only Delivered-To names it), and those the
 * sender wrote to never wrote to the help desk, so they get none of its mail.
 */
async function copiedAddresses(mail: IncomingMessage, t: Transaction): Promise<string[]> {
  const recipients = [...new Set([...mail.to, ...mail.cc])];
  const own = new Set((await ownAddresses(recipients, t)).map((e) => e.address.toLowerCase()));
  if (!own.size) return [];
  return recipients.filter((a) => a !== mail.from!.address && !own.has(splitSubaddress(a).base));
}

/** Tells the sender of a mail what was refused (the notifications decide the notice mail). */
async function tellRefused(refusal: MailRefusal, ticket: Ticket, address: string, t: Transaction, messageId?: number | null): Promise<void> {
  await emit(t, 'mailbox.refused', { ticketId: ticket.id, address, refused: refusal, ...(messageId ? { messageId } : {}) });
}

/**
 * Rules 6 and 7: files the mail into its ticket (a reply is written at once, in a savepoint, so a
 * refusal leaves nothing behind), or says which ticket it opens (./opening.ts opens it with those
 * of the other mails of the transaction). `beforeWrite` runs before the mail writes anything.
 */
async function importMail(mail: IncomingMessage, source: MailSource, t: Transaction, beforeWrite: () => Promise<void>): Promise<Decision | Opening> {
  const settings = await onceInTransaction(t, 'ticket.settings', () => cachedTicketSettings(t));
  const automatic = automaticReason(mail);
  const { allowed, refused } = sortFiles(mail, settings);
  const from = mail.from!.address;
  const createdAt = createdAtOf(mail);
  // An automatic reply notifies nobody; an automatic mail that opens a ticket is not answered, but
  // the operators hear of the new ticket (a monitoring alert must not go unnoticed).
  const notesOf = (opening: boolean) => [
    mail.headerFrom ? `the sender is the Reply-To ${from} (MAIL_PRIORITISE_REPLY_TO; From: ${mail.headerFrom.address})` : null,
    automatic ? `automatic mail (${automatic}): ${opening ? 'the sender is not answered' : 'nobody notified'}` : null, refused.length ? `files refused: ${refused.join(', ')}` : null,
  ].filter(Boolean).join('; ') || null;

  const target = await threadTarget(mail, t);
  if (target) {
    const { ticket, how, joinsAsCc, operator, forwardReply } = target;
    // An operator's mail is their public reply only when a person wrote it (not automatic) in
    // answer, by its headers, to a mail of their own conversation (a notification, their earlier
    // reply by mail): only they hold its Message-ID. Found by the sub-address or the subject's
    // number, anyone could have written it under their address; an out-of-office must not reach the
    // customer. Either is a note, as an operator's answer to a mail about a note (answersNote) is.
    const ownThread = !!operator && target.answeredAudience === operatorAudience(operator.id);
    const operatorNote = !!operator && (!!automatic || !ownThread || target.answersNote);
    const operatorWhy = !operatorNote ? null
      : automatic ? 'an operator\'s automatic mail: filed as a note'
        : !ownThread ? 'an operator\'s mail that answers none of the mails they were sent: filed as a note'
          : 'an operator\'s answer to a note: filed as a note';
    const department = await Department.findByPk(ticket.department_id, { attributes: ['id', 'disable_user_email_replies'], transaction: t });
    // The answer to a forward is a note: the rules of a user's reply do not apply to it.
    const byUser = !operator && !forwardReply;
    const joinCc = joinsAsCc && !operator ? from : undefined;
    await beforeWrite();
    // Past the flood limit of its sender and ticket: filed as an automatic mail (./flood.ts).
    const flood = await floodReason(ticket.id, mail, t);
    const quiet = !!automatic || !!flood;
    if (byUser && ticket.locked) {
      if (!quiet) await tellRefused('locked', ticket, from, t);
      return decided('rejected', [`The ticket #${ticket.number} is locked: replies are not accepted (found by ${how}).`, flood].filter(Boolean).join(' '), { ticketId: ticket.id });
    }
    // A person answering the thread joins the ticket's CC list; an out-of-office reply or a list
    // does not (the conversation would go to it from then on), and not on the ticket, it is not added.
    if (byUser && joinCc && automatic) {
      return decided('rejected', `Not added to ticket #${ticket.number}: an automatic mail (${automatic}) from ${from}, who is not on the ticket, joins no one to it (found by ${how}).`, { ticketId: ticket.id });
    }
    if (byUser && department?.disable_user_email_replies) {
      if (!quiet) await tellRefused('replies_disabled', ticket, from, t);
      return decided('rejected', `The department of ticket #${ticket.number} does not accept replies by email.`, { ticketId: ticket.id });
    }
    try {
      // In a savepoint: a user created for a reply that is then refused does not stay behind.
      const message = await sequelize().transaction({ transaction: t }, async (savepoint) => {
        const author = operator ?? (await userForAddress(from, ticket.brand_id, namesOf(mail), savepoint));
        // Someone else than the ticket's user writing: whether the ticket's user had the mail too,
        // so that the copy of it reaches them only if not (ticket/mail/job.ts).
        const userOnMail = byUser && author.id !== ticket.user_id ? await hasAddressAmong(ticket.user_id, [...mail.to, ...mail.cc], savepoint) : undefined;
        const added = await addMessage({
          ticketId: ticket.id, userId: author.id, text: plainTextAsRichText(mail.text || '(no text)'), type: operatorNote ? MESSAGE_TYPE.NOTE : MESSAGE_TYPE.MESSAGE,
          // Those the answer to a forward is copied to are the forward's, not the ticket's; a note copies nobody.
          cc: forwardReply || operatorNote || automatic ? [] : await copiedAddresses(mail, savepoint), attachments: allowed,
          createdAt, channel: 'email', automatic: quiet, ...(forwardReply || operatorNote ? { sendOperatorsEmail: true } : {}),
          ...(userOnMail !== undefined ? { userOnMail } : {}),
        }, savepoint, { settings, joinCc, forwardReply, intoTrash: true });
        return added.message;
      });
      // An automatic mail is no anchor of the thread: the next reply answers the person's last mail,
      // not their out-of-office. Nor is an operator's mail outside their thread: answering it would
      // make a mail under their address their public reply.
      if (mail.messageId && !automatic && (!operator || ownThread)) {
        const audience = operator ? operatorAudience(operator.id) : forwardReply ? target.answeredAudience ?? 'forward' : 'user';
        await recordMessageId({ messageId: mail.messageId, ticketId: message.ticket_id, ticketMessageId: message.id, direction: 'in', audience }, t);
      }
      if (refused.length && !quiet) await tellRefused('attachments', ticket, from, t, message.id);
      return decided('reply', [`Found by ${how}`, forwardReply ? `the answer to ${target.answeredAudience === 'forward' ? 'a forward' : 'an operator\'s mail'}: filed as a note` : null, operatorWhy, joinCc && !forwardReply ? `${from} joined the ticket as a CC` : null, notesOf(false), flood].filter(Boolean).join('; '), { ticketId: message.ticket_id, messageId: message.id, imported: true });
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      return decided('rejected', `Not added to ticket #${ticket.number}: ${err.message}`, { ticketId: ticket.id });
    }
  }

  const recipients = [...mail.to, ...mail.cc, ...mail.deliveredTo];
  const [matched] = await ownAddresses(recipients, t);
  const mailbox = matched ?? (source.departmentEmail?.consume_all ? source.departmentEmail : null);
  if (!mailbox) return decided('rejected', 'Failed to find a department address in the recipient list.');
  const names = namesOf(mail);
  // Past the new-ticket flood limit of its sender: opened as an automatic mail is, its sender not answered.
  const flood = automatic ? null : await openingFloodReason(mail, t);
  const quiet = !!automatic || !!flood;
  return {
    mail, address: mailbox.address, refused, automatic: quiet, notes: [notesOf(true), flood].filter(Boolean).join('; ') || null,
    input: {
      brandId: mailbox.brand_id, departmentId: mailbox.department_id, departmentEmailId: mailbox.id,
      subject: (mail.subject || '(no subject)').slice(0, 255), text: plainTextAsRichText(mail.text || '(no text)'), userEmail: from,
      // A list's copy or an out-of-office copies no one: the list address would get the ticket's mail.
      userFirstname: names.firstname, userLastname: names.lastname, cc: automatic ? [] : await copiedAddresses(mail, t),
      attachments: allowed, channel: 'email', createdAt, sendUserEmail: !quiet, sendOperatorsEmail: true,
    },
  };
}
