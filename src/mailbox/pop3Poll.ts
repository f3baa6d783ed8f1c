import { Op } from 'sequelize';
import { config } from '../config';
import { DepartmentEmail, IncomingMail } from '../db/models';
import type { IncomingDecision } from '../db/models/IncomingMail';
import { defaultPort } from '../ticket/departmentEmailTypes';
import { ingestMail } from './ingest';
import type { MailLogin } from './login';
import { Pop3Client } from './pop3';
import { tally, tlsOptions, type PollSummary } from './pollSummary';

/**
 * One poll of a POP3 mailbox. POP3 has no cursor: what was taken is known by UIDL, from the
 * ledger (each mail's line carries its UIDL and is written in the transaction of its import).
 * New UIDLs are retrieved and imported one at a time; with `delete_downloaded` every mail taken
 * (now or by an earlier poll that died before QUIT) is deleted, which POP3 applies at QUIT.
 */
export async function pollPop3(mailbox: DepartmentEmail, login: MailLogin): Promise<PollSummary> {
  const client = await Pop3Client.connect({
    host: mailbox.server!, port: mailbox.port ?? defaultPort('pop3', mailbox.encryption), encryption: mailbox.encryption,
    user: mailbox.username!, ...('pass' in login ? { password: login.pass } : { accessToken: login.accessToken }), timeoutMs: config().mailbox.timeoutMs, tls: tlsOptions(),
  });
  const summary: PollSummary = { fetched: 0, decisions: {} };
  try {
    const listed = await client.uidl();
    const taken = await takenUids(mailbox.id, listed.map((m) => m.uid));
    for (const { number, uid } of listed) {
      let decision = taken.get(uid);
      if (!decision) {
        const raw = await client.retrieve(number);
        decision = (await ingestMail(raw, { departmentEmail: mailbox, remoteUid: uid })).decision;
        tally(summary, decision);
      }
      // A mail whose import failed stays in the mailbox for a person to look at.
      if (mailbox.delete_downloaded && decision !== 'error') await client.delete(number);
    }
    await client.quit();
  } catch (err) {
    client.close();
    throw err;
  }
  return summary;
}

/** The UIDLs among `uids` that the ledger has for this mailbox, with the decision taken. */
async function takenUids(mailboxId: number, uids: string[]): Promise<Map<string, IncomingDecision>> {
  const taken = new Map<string, IncomingDecision>();
  for (let i = 0; i < uids.length; i += 1000) {
    const rows = await IncomingMail.findAll({
      attributes: ['remote_uid', 'decision'], where: { department_email_id: mailboxId, remote_uid: { [Op.in]: uids.slice(i, i + 1000) } },
    });
    for (const r of rows) if (r.remote_uid) taken.set(r.remote_uid, r.decision);
  }
  return taken;
}
