import type { Transaction } from 'sequelize';
import { DepartmentEmail } from '../db/models';
import { TYPE_REMOTE } from '../ticket/departmentEmailTypes';

/**
 * The mailbox a poll reads was changed through the API after the poll began (its
 * `settings_version` moved: another account, server or password, disabled), or deleted. The poll
 * stops where it is: the mail or batch being imported is rolled back, and the poll writes nothing
 * over the change (its cursor, `last_error`, the backoff). The next round polls the new settings.
 */
export class MailboxChanged extends Error {
  constructor(readonly what: 'deleted' | 'disabled' | 'changed') {
    super(what === 'changed' ? 'The mailbox settings were changed during the poll.' : `The mailbox was ${what} during the poll.`);
  }
}

/**
 * Throws MailboxChanged unless the mailbox still has the settings its poll began with (`mailbox`,
 * as the poll read it). In `t` the read locks the row (FOR UPDATE): it sees the latest committed
 * settings, and a change waits until `t` ends, so what `t` imports and writes (the cursor) is under
 * them. Run first in `t` (./ingest.ts: `advance`): a transaction that took the row's shared lock
 * first (a foreign key naming it) and its exclusive one last, to write the cursor, met a change
 * waiting between the two in a deadlock, and the change, InnoDB's victim, was starved by the
 * batches that followed.
 */
export async function assertStillPolled(mailbox: DepartmentEmail, t?: Transaction): Promise<void> {
  const row = await DepartmentEmail.findByPk(mailbox.id, { attributes: ['id', 'type', 'settings_version'], transaction: t, ...(t ? { lock: t.LOCK.UPDATE } : {}) });
  if (!row) throw new MailboxChanged('deleted');
  if (row.type !== TYPE_REMOTE) throw new MailboxChanged('disabled');
  if (row.settings_version !== mailbox.settings_version) throw new MailboxChanged('changed');
}
