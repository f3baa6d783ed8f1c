import { config } from '../config';
import { checkedLookup } from '../net/outbound';
import type { DepartmentEmail } from '../db/models';
import { defaultPort } from '../ticket/departmentEmailTypes';
import { ingestMail } from './ingest';
import { decisionsOf, deletable } from './ledger';
import type { MailLogin } from './login';
import { assertStillPolled, MailboxChanged } from './pollGuard';
import { Pop3Client } from './pop3';
import { tally, tlsOptions, type PollSummary } from './pollSummary';

/**
 * One poll of a POP3 mailbox. POP3 has no cursor: what was taken is known by UIDL, from the
 * ledger (each mail's line carries its UIDL and is written in the transaction of its import).
 * Nor has it flags: the first poll imports every mail the server holds, old ones included (IMAP's
 * leaves the mails already read alone: ./imap.ts; docs/mail.md, The first poll of a mailbox).
 * New UIDLs are retrieved and imported one at a time (one over MAILBOX_MAX_MESSAGE_BYTES by its
 * header only, and refused); with `delete_downloaded` every mail taken
 * (now or by an earlier poll that died before QUIT) is deleted, which POP3 applies at QUIT; a
 * mail recorded as an `error`, or refused by a rule (`spam`, `rejected`), is not (./ledger.ts, deletable). A poll failed by the database (a
 * transient error, ./ingest.ts) ends without QUIT: nothing is deleted, and the next poll retrieves
 * the mail it failed on again. Each import checks, in its transaction, that the mailbox still has
 * the settings the poll began with (./pollGuard.ts): changed, disabled or deleted meanwhile, the
 * poll stops there (QUIT: what it imported before is deleted with `delete_downloaded`).
 */
export async function pollPop3(mailbox: DepartmentEmail, login: MailLogin): Promise<PollSummary> {
  const client = await Pop3Client.connect({
    host: mailbox.server!, port: mailbox.port ?? defaultPort('pop3', mailbox.encryption), encryption: mailbox.encryption,
    user: mailbox.username!, ...('pass' in login ? { password: login.pass } : { accessToken: login.accessToken }), timeoutMs: config().mailbox.timeoutMs, tls: tlsOptions(),
    lookup: checkedLookup('mail-server'), // connect only where the check allows, whatever DNS says by then
  });
  const summary: PollSummary = { fetched: 0, decisions: {} };
  try {
    const listed = await client.uidl();
    const taken = await decisionsOf(mailbox.id, listed.map((m) => m.uid));
    const sizes = listed.some((m) => !taken.has(m.uid)) ? await client.sizes() : new Map<number, number>();
    const { maxMessageBytes } = config().mailbox;
    for (const { number, uid } of listed) {
      let decision = taken.get(uid);
      if (!decision) {
        // A mail over the limit is not downloaded (it would be held in memory whole): its header
        // is enough to refuse it and tell its sender, as IMAP does.
        const size = sizes.get(number) ?? 0;
        const raw = size > maxMessageBytes ? await client.headers(number).catch(() => Buffer.alloc(0)) : await client.retrieve(number);
        decision = (await ingestMail(raw, { departmentEmail: mailbox, remoteUid: uid }, {
          declaredSize: size, advance: (t) => assertStillPolled(mailbox, t), stillPolled: () => assertStillPolled(mailbox),
        })).decision;
        tally(summary, decision);
      }
      // A mail whose import failed, or that a rule refused, stays in the mailbox for a person to look at.
      if (mailbox.delete_downloaded && deletable(decision)) await client.delete(number);
    }
    await client.quit();
  } catch (err) {
    if (err instanceof MailboxChanged) await client.quit().catch(() => client.close());
    else client.close();
    throw err;
  }
  return summary;
}
