import { ImapFlow } from 'imapflow';
import { Op, type Transaction } from 'sequelize';
import { config } from '../config';
import { DepartmentEmail } from '../db/models';
import type { IncomingDecision } from '../db/models/IncomingMail';
import { transaction } from '../db/transaction';
import { logger } from '../logger';
import { checkedLookup } from '../net/outbound';
import { defaultPort } from '../ticket/departmentEmailTypes';
import { ingestBatch, type BatchMail, type IngestResult } from './ingest';
import { decisionsOf, deletable, settled } from './ledger';
import type { MailLogin } from './login';
import { assertStillPolled } from './pollGuard';
import { tally, tlsOptions, type PollSummary } from './pollSummary';

/**
 * One poll of an IMAP mailbox. The cursor is the mailbox's UIDVALIDITY and the last UID taken
 * (stored on the department email); only UIDs above it are fetched, in batches
 * (`MAILBOX_BATCH_SIZE` mails, at most `MAILBOX_BATCH_BYTES`, one FETCH each), each batch imported
 * in a transaction that also advances the cursor (./ingest.ts, ingestBatch). Then the batch's mails
 * are deleted (`delete_downloaded`) or flagged \Seen, one command each. A mail whose import failed
 * in an unexpected way is recorded as an error and left where it is, unflagged (never deleted:
 * ./ledger.ts, settled); one a rule refused (spam, rejected) is flagged \Seen and never deleted
 * (./ledger.ts, deletable). A transient database error (a deadlock, a lost connection: ./ingest.ts)
 * fails the poll with the cursor before the mail it failed on, which the next poll takes again.
 *
 * The first poll (no cursor yet: a new mailbox, or one the API moved to another server or
 * account) imports only the mails not flagged \Seen, the worker's own mark of a mail done with:
 * those already read were dealt with before the help desk took the mailbox over, and importing
 * them opened a ticket and sent an acknowledgement for each, to customers of years ago. The cursor
 * moves past them, and the last UID that poll lists is kept (`imap_first_poll_uid`): a later poll
 * leaves a \Seen mail up to it alone too (the rest of a first poll that failed half-way), while a
 * mail that arrives after it is imported, read or not.
 *
 * A new UIDVALIDITY (the server renumbered the mailbox) starts the cursor again from 0: every
 * mail is then fetched again, read or not (it is no first poll), and the ledger's import keys
 * recognise those already imported.
 * With `delete_downloaded`, mails at or below the cursor that are still there (a worker that died
 * between the commit and the delete, or imported before `delete_downloaded` was set) are deleted
 * at the start of the next poll, those the ledger has settled and not refused: a mail recorded as
 * an error or refused by a rule (or not recorded at all) stays, and is not looked at again (sweep).
 *
 * The settings may change through the API while a poll runs (another account: the API resets the
 * cursor; the mailbox disabled or deleted): the poll checks before each batch, and each import
 * transaction first, locking the mailbox's row until it commits, that the mailbox still has the
 * settings the poll began with (./pollGuard.ts). If not, it stops (MailboxChanged) without
 * importing more or writing its cursor; a change waits for the batch under way.
 */
export async function pollImap(mailbox: DepartmentEmail, login: MailLogin): Promise<PollSummary> {
  const { timeoutMs, maxMessageBytes, batchSize, batchBytes } = config().mailbox;
  const client = new ImapFlow({
    host: mailbox.server!, port: mailbox.port ?? defaultPort('imap', mailbox.encryption), secure: mailbox.encryption === 'ssl',
    // 'none' must never upgrade on its own: a STARTTLS offer with a certificate nobody asked to trust would fail the poll.
    doSTARTTLS: mailbox.encryption === 'tls', auth: { user: mailbox.username!, ...login }, logger: false,
    // imapflow hands its tls options to net.connect too: the socket connects only where the check
    // allows (src/net/outbound.ts), whatever DNS answers by then.
    tls: { ...tlsOptions(), lookup: checkedLookup('mail-server') }, disableAutoIdle: true, connectionTimeout: timeoutMs, greetingTimeout: timeoutMs, socketTimeout: timeoutMs,
  });
  client.on('error', (err: Error) => logger.debug({ mailbox: mailbox.id, reason: err.message }, 'imap connection error'));
  const summary: PollSummary = { fetched: 0, decisions: {} };
  await client.connect();
  try {
    const lock = await client.getMailboxLock('INBOX');
    try {
      const box = client.mailbox;
      if (!box) throw new Error('The INBOX could not be opened.');
      const uidValidity = String(box.uidValidity);
      // No cursor yet: the mailbox's first poll (a new mailbox, or one moved to another server or account).
      const firstPoll = mailbox.imap_uidvalidity === null;
      const renumbered = !firstPoll && mailbox.imap_uidvalidity !== uidValidity;
      if (renumbered) logger.warn({ mailbox: mailbox.id, was: mailbox.imap_uidvalidity, now: uidValidity }, 'UIDVALIDITY changed: the mailbox is read again from the start');
      const lastUid = firstPoll || renumbered ? 0 : mailbox.imap_last_uid;
      if (mailbox.delete_downloaded && lastUid > mailbox.imap_swept_uid) await sweep(client, mailbox, uidValidity, lastUid);

      // Listed first, fetched one by one after: imapflow cannot run a command inside a running FETCH.
      // The flags only while mails read before the first poll may be among them.
      let readBefore = firstPoll || renumbered ? 0 : mailbox.imap_first_poll_uid;
      const listed: Listed[] = [];
      for await (const m of client.fetch(`${lastUid + 1}:*`, { uid: true, size: true, flags: firstPoll || readBefore > lastUid }, { uid: true })) {
        if (m.uid > lastUid) listed.push({ uid: m.uid, size: m.size ?? 0, seen: !!m.flags?.has('\\Seen') });
      }
      listed.sort((a, b) => a.uid - b.uid);
      if (firstPoll) readBefore = listed.at(-1)?.uid ?? 0;
      const { pending, skippedTo, skipped } = pendingOf(listed, readBefore);
      if (firstPoll || renumbered || skippedTo > lastUid) {
        await transaction(async (t) => {
          await assertStillPolled(mailbox, t);
          await DepartmentEmail.update({
            imap_uidvalidity: uidValidity, imap_last_uid: Math.max(lastUid, skippedTo), imap_first_poll_uid: readBefore,
            // Another numbering (or another mailbox): nothing of it has been swept.
            ...(firstPoll || renumbered ? { imap_swept_uid: 0 } : {}),
          }, { where: { id: mailbox.id }, transaction: t });
        });
      }
      if (skipped) logger.info({ mailbox: mailbox.id, skipped, readBefore }, 'mails read before the first poll left alone');

      for (const batch of batches(pending, batchSize, batchBytes, maxMessageBytes)) {
        await assertStillPolled(mailbox);
        const raws = await fetchBatch(client, batch, maxMessageBytes);
        const mails: BatchMail[] = batch.map(({ uid, size, through }) => ({
          raw: raws.get(uid) ?? Buffer.alloc(0), remoteUid: `${uidValidity}:${uid}`, declaredSize: size,
          advance: async (t: Transaction) => {
            await assertStillPolled(mailbox, t);
            await DepartmentEmail.update({ imap_uidvalidity: uidValidity, imap_last_uid: through }, {
              where: { id: mailbox.id, imap_last_uid: { [Op.lt]: through } }, transaction: t,
            });
          },
        }));
        let results: IngestResult[];
        try {
          results = await ingestBatch(mails, mailbox, () => assertStillPolled(mailbox));
        } catch (err) {
          // The database failed the poll, maybe after some of the batch's mails were imported one by
          // one: those are put away now, if the ledger can be read (with `delete_downloaded` the
          // next poll would delete them anyway).
          await putAway(client, mailbox, uidValidity, batch.map((p) => p.uid)).catch(() => undefined);
          throw err;
        }
        results.forEach((result) => tally(summary, result.decision));
        // Those whose import failed stay unflagged.
        await finish(client, mailbox, batch.map((p, i) => ({ uid: p.uid, decision: results[i].decision })));
      }
    } finally {
      lock.release();
    }
  } finally {
    await client.logout().catch(() => client.close());
  }
  return summary;
}

/**
 * Deletes (`delete_downloaded`) or flags \Seen the settled mails, one command each: with
 * `delete_downloaded`, those a rule refused are flagged instead (./ledger.ts, deletable).
 */
async function finish(client: ImapFlow, mailbox: DepartmentEmail, mails: Array<{ uid: number; decision: IncomingDecision }>): Promise<void> {
  const done = mails.filter((m) => settled(m.decision));
  const removed = mailbox.delete_downloaded ? done.filter((m) => deletable(m.decision)).map((m) => m.uid) : [];
  const flagged = done.map((m) => m.uid).filter((uid) => !removed.includes(uid));
  if (removed.length) await client.messageDelete(uidSet(removed), { uid: true });
  if (flagged.length) await client.messageFlagsAdd(uidSet(flagged), ['\\Seen'], { uid: true });
}

/**
 * With `delete_downloaded`: puts away the mails still there at or below the cursor and above the
 * last sweep (`imap_swept_uid`), those a worker that died between a commit and its delete left
 * behind, or imported while `delete_downloaded` was off (their UIDs are above the last sweep,
 * which only polls with it on make), then records the sweep. What stays at or below it stays on
 * purpose (refused by a rule, a failed import, unknown to the ledger): a poll no longer reads their
 * ledger lines and flags them again, work that grew with every spam a mailbox keeps.
 */
async function sweep(client: ImapFlow, mailbox: DepartmentEmail, uidValidity: string, lastUid: number): Promise<void> {
  const left = await client.search({ uid: `${mailbox.imap_swept_uid + 1}:${lastUid}` }, { uid: true });
  if (left && left.length) await putAway(client, mailbox, uidValidity, left);
  await transaction(async (t) => {
    await assertStillPolled(mailbox, t);
    await DepartmentEmail.update({ imap_swept_uid: lastUid }, { where: { id: mailbox.id }, transaction: t });
  });
}

/** Finishes the mails by their ledger lines (./ledger.ts): one recorded as an error, or not recorded, stays as it is. */
async function putAway(client: ImapFlow, mailbox: DepartmentEmail, uidValidity: string, uids: number[]): Promise<void> {
  const decisions = await decisionsOf(mailbox.id, uids.map((uid) => `${uidValidity}:${uid}`));
  await finish(client, mailbox, uids.flatMap((uid) => {
    const decision = decisions.get(`${uidValidity}:${uid}`);
    return decision === undefined ? [] : [{ uid, decision }];
  }));
}

/** An IMAP UID set with runs as ranges (`1:40,42`): what is left of a long mailbox stays one short command. */
function uidSet(uids: number[]): string {
  const sorted = [...new Set(uids)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length; i++) {
    const start = sorted[i];
    while (i + 1 < sorted.length && sorted[i + 1] === sorted[i] + 1) i++;
    parts.push(start === sorted[i] ? String(start) : `${start}:${sorted[i]}`);
  }
  return parts.join(',');
}

type Listed = { uid: number; size: number; seen: boolean };
/** A mail to import, and the UID the cursor moves to once it is: past it and the mails left alone after it. */
type Pending = { uid: number; size: number; through: number };

/**
 * The listed mails to import: all but those up to `readBefore` flagged \Seen (read before the
 * mailbox's first poll), which the cursor moves past (`skippedTo`: those before the first mail to
 * import; the others with the mail before them, `through`).
 */
function pendingOf(listed: Listed[], readBefore: number): { pending: Pending[]; skippedTo: number; skipped: number } {
  const pending: Pending[] = [];
  let skippedTo = 0;
  let skipped = 0;
  for (const { uid, size, seen } of listed) {
    if (!(seen && uid <= readBefore)) pending.push({ uid, size, through: uid });
    else {
      skipped++;
      if (pending.length) pending[pending.length - 1].through = uid;
      else skippedTo = uid;
    }
  }
  return { pending, skippedTo, skipped };
}

/** The pending mails in batches of at most `size` mails and `bytes` bytes (a mail over the import limit counts nothing: only its headers are fetched). */
function* batches(pending: Pending[], size: number, bytes: number, maxMessageBytes: number): Generator<Pending[]> {
  let batch: Pending[] = [];
  let held = 0;
  for (const p of pending) {
    const weight = p.size > maxMessageBytes ? 0 : p.size;
    if (batch.length && (batch.length >= size || held + weight > bytes)) {
      yield batch;
      batch = [];
      held = 0;
    }
    batch.push(p);
    held += weight;
  }
  if (batch.length) yield batch;
}

/** The batch's mails by UID: one FETCH of the sources, and the headers alone of those too large to download. */
async function fetchBatch(client: ImapFlow, batch: Pending[], maxMessageBytes: number): Promise<Map<number, Buffer>> {
  const out = new Map<number, Buffer>();
  const whole = batch.filter((p) => p.size <= maxMessageBytes).map((p) => p.uid);
  const headersOnly = batch.filter((p) => p.size > maxMessageBytes).map((p) => p.uid);
  if (whole.length) {
    for await (const m of client.fetch(whole.join(','), { uid: true, source: true }, { uid: true })) if (m.source) out.set(m.uid, m.source);
  }
  // A mail over the limit is not downloaded: its headers say who to tell why (./refusal.ts).
  if (headersOnly.length) {
    for await (const m of client.fetch(headersOnly.join(','), { uid: true, headers: true }, { uid: true })) if (m.headers) out.set(m.uid, m.headers);
  }
  return out;
}
