import { BaseError, Op } from 'sequelize';
import { config } from '../config';
import { now } from '../db/entity';
import { DepartmentEmail } from '../db/models';
import { transaction } from '../db/transaction';
import { emit } from '../events';
import { logger } from '../logger';
import { mailboxPolls, mailsIngested } from '../ops/metrics';
import { TYPE_REMOTE } from '../ticket/departmentEmailTypes';
import { foreignText, resolveChecked } from '../net/outbound';
import { errorText } from '../db/errors';
import { pollImap } from './imap';
import { withLogin } from './login';
import { assertStillPolled, MailboxChanged } from './pollGuard';
import { pollPop3 } from './pop3Poll';
import type { PollSummary } from './pollSummary';

/**
 * Polls one department mailbox and records how it went where operators see it (the department
 * email's `last_polled_at`, `last_error`, `last_error_at`, `poll_failures`, `next_poll_at`). A
 * failure (login refused, server unreachable, TLS) is not retried at once: the mailbox waits an
 * interval that doubles with each failure in a row (up to MAILBOX_MAX_BACKOFF_SECONDS), while the
 * other mailboxes are polled as usual. Each failure is a `mailbox.error` event.
 *
 * A mailbox changed through the API during its poll (another account, disabled) or deleted is no
 * failure: the poll stops (./pollGuard.ts), says so in one info line, and writes nothing of its own
 * over the new settings; the next round polls those.
 */
export async function pollMailbox(id: number): Promise<PollSummary | { skipped: string } | { error: string }> {
  const mailbox = await DepartmentEmail.findByPk(id);
  if (!mailbox || mailbox.type !== TYPE_REMOTE) return { skipped: 'not a remote mailbox (any more)' };
  const log = logger.child({ mailbox: id, address: mailbox.address });
  try {
    if (!mailbox.server || !mailbox.username || (!mailbox.password && mailbox.auth_type !== 'oauth2')) throw new Error('The mailbox has no server, username or password.');
    await resolveChecked(mailbox.server, 'mail-server');
    const summary = await withLogin(mailbox, (login) => (mailbox.protocol === 'pop3' ? pollPop3(mailbox, login) : pollImap(mailbox, login)));
    await DepartmentEmail.update({ last_polled_at: now(), last_error: null, last_error_at: null, poll_failures: 0, next_poll_at: null }, {
      where: { id, settings_version: mailbox.settings_version },
    });
    mailboxPolls.inc({ outcome: 'ok' });
    for (const [decision, n] of Object.entries(summary.decisions)) mailsIngested.inc({ decision }, n);
    if (summary.fetched) log.info({ ...summary }, 'mailbox polled');
    return summary;
  } catch (err) {
    const reason = describePollError(err);
    const failures = mailbox.poll_failures + 1;
    const wait = Math.min(config().mailbox.maxBackoffSeconds, Math.ceil(config().mailbox.pollEveryMs / 1000) * 2 ** Math.min(failures - 1, 20));
    const at = now();
    try {
      if (err instanceof MailboxChanged) throw err;
      // The failure of the settings the poll began with (a mailbox deleted meanwhile fails an
      // import on its foreign key): recorded only while the mailbox still has them.
      await transaction(async (t) => {
        await assertStillPolled(mailbox, t);
        await DepartmentEmail.update({ last_polled_at: at, last_error: reason, last_error_at: at, poll_failures: failures, next_poll_at: at + wait }, { where: { id }, transaction: t });
        await emit(t, 'mailbox.error', { departmentEmailId: id });
      });
    } catch (stop) {
      if (!(stop instanceof MailboxChanged)) throw stop;
      mailboxPolls.inc({ outcome: 'stopped' });
      log.info({ reason: stop.message }, 'mailbox poll stopped');
      return { skipped: stop.message };
    }
    mailboxPolls.inc({ outcome: 'error' });
    log.warn({ reason, failures, retryInSeconds: wait }, 'mailbox poll failed');
    return { error: reason };
  }
}

/** A poll failure in words an operator can act on (never the password). */
export function describePollError(err: unknown): string {
  const e = err as { message?: string; authenticationFailed?: boolean; code?: string; responseText?: string; serverText?: string };
  // The server's own words are kept to a short first line (foreignText): a mailbox pointed at some
  // other service must not make its banner or answers readable through last_error.
  if (e?.authenticationFailed) return `Login refused by the server: ${foreignText(e.responseText ?? e.serverText ?? e.message ?? 'authentication failed')}`;
  if (e?.code === 'ECONNREFUSED') return 'The server refused the connection (ECONNREFUSED): check the server and port.';
  if (e?.code === 'ENOTFOUND' || e?.code === 'EAI_AGAIN') return `The server name could not be resolved (${e.code}).`;
  if (e?.code && /CERT|SELF_SIGNED|TLS|SSL/i.test(e.code)) return `TLS failed (${e.code}): ${foreignText(e.message)}`;
  // Ours, not the server's: a transient database error fails the poll (./ingest.ts); said without the SQL statement.
  if (err instanceof BaseError) return `The database failed: ${foreignText(errorText(err), 300)}`;
  return foreignText(e?.message || String(err), 300);
}

/** The remote mailboxes due for a poll: never failed, or their backoff is over. */
export async function dueMailboxes(): Promise<number[]> {
  const rows = await DepartmentEmail.findAll({
    attributes: ['id'],
    where: { type: TYPE_REMOTE, [Op.or]: [{ next_poll_at: null }, { next_poll_at: { [Op.lte]: now() } }] },
    order: [['id', 'ASC']],
  });
  return rows.map((r) => r.id);
}
