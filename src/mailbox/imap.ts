import { ImapFlow } from 'imapflow';
import { Op, type Transaction } from 'sequelize';
import { config } from '../config';
import { DepartmentEmail } from '../db/models';
import { logger } from '../logger';
import { defaultPort } from '../ticket/departmentEmailTypes';
import { ingestMail } from './ingest';
import type { MailLogin } from './login';
import { tally, tlsOptions, type PollSummary } from './pollSummary';

/**
 * One poll of an IMAP mailbox. The cursor is the mailbox's UIDVALIDITY and the last UID taken
 * (stored on the department email); only UIDs above it are fetched, one mail at a time, each
 * imported in a transaction that also advances the cursor. Then the mail is deleted
 * (`delete_downloaded`) or flagged \Seen. A mail whose import failed in an unexpected way is
 * recorded as an error and left where it is, unflagged.
 *
 * A new UIDVALIDITY (the server renumbered the mailbox) starts the cursor again from 0: every
 * mail is then fetched again, and the ledger's import keys recognise those already imported.
 * With `delete_downloaded`, mails at or below the cursor that are still there (a worker that died
 * between the commit and the delete) are deleted at the start of the next poll.
 */
export async function pollImap(mailbox: DepartmentEmail, login: MailLogin): Promise<PollSummary> {
  const { timeoutMs, maxMessageBytes } = config().mailbox;
  const client = new ImapFlow({
    host: mailbox.server!, port: mailbox.port ?? defaultPort('imap', mailbox.encryption), secure: mailbox.encryption === 'ssl',
    // 'none' must never upgrade on its own: a STARTTLS offer with a certificate nobody asked to trust would fail the poll.
    doSTARTTLS: mailbox.encryption === 'tls', auth: { user: mailbox.username!, ...login }, logger: false,
    tls: tlsOptions(), disableAutoIdle: true, connectionTimeout: timeoutMs, greetingTimeout: timeoutMs, socketTimeout: timeoutMs,
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
      let lastUid = mailbox.imap_last_uid;
      if (mailbox.imap_uidvalidity !== uidValidity) {
        if (mailbox.imap_uidvalidity !== null) logger.warn({ mailbox: mailbox.id, was: mailbox.imap_uidvalidity, now: uidValidity }, 'UIDVALIDITY changed: the mailbox is read again from the start');
        lastUid = 0;
        await DepartmentEmail.update({ imap_uidvalidity: uidValidity, imap_last_uid: 0 }, { where: { id: mailbox.id } });
      }
      if (mailbox.delete_downloaded && lastUid > 0) await client.messageDelete(`1:${lastUid}`, { uid: true });

      // Listed first, fetched one by one after: imapflow cannot run a command inside a running FETCH.
      const pending: Array<{ uid: number; size: number }> = [];
      for await (const m of client.fetch(`${lastUid + 1}:*`, { uid: true, size: true }, { uid: true })) {
        if (m.uid > lastUid) pending.push({ uid: m.uid, size: m.size ?? 0 });
      }
      pending.sort((a, b) => a.uid - b.uid);

      for (const { uid, size } of pending) {
        const tooLarge = size > maxMessageBytes;
        // A mail over the limit is not downloaded: its headers say who to tell why (./refusal.ts).
        const message = await client.fetchOne(String(uid), tooLarge ? { uid: true, headers: true } : { uid: true, source: true }, { uid: true });
        const raw = (message && (tooLarge ? message.headers : message.source)) || Buffer.alloc(0);
        const advance = async (t: Transaction) => {
          await DepartmentEmail.update({ imap_uidvalidity: uidValidity, imap_last_uid: uid }, {
            where: { id: mailbox.id, imap_last_uid: { [Op.lt]: uid } }, transaction: t,
          });
        };
        const result = await ingestMail(raw, { departmentEmail: mailbox, remoteUid: `${uidValidity}:${uid}` }, { advance, declaredSize: size });
        tally(summary, result.decision);
        if (result.decision === 'error') continue;
        if (mailbox.delete_downloaded) await client.messageDelete(String(uid), { uid: true });
        else await client.messageFlagsAdd(String(uid), ['\\Seen'], { uid: true });
      }
    } finally {
      lock.release();
    }
  } finally {
    await client.logout().catch(() => client.close());
  }
  return summary;
}
