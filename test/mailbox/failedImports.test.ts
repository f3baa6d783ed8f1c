/**
 * Mails whose import fails, against a real dovecot and the real database. A mail that fails in a
 * way no rule foresaw is recorded as an `error` (its reason without the SQL statement) and stays
 * in the mailbox for a person to look at: `delete_downloaded` never deletes it, at the poll that
 * recorded it or at any later one, IMAP and POP3 alike. A transient database error (a lock wait
 * timeout: a row another connection holds locked) records nothing: the poll fails with the mail
 * not taken, and the next poll imports it and the mails after it. A mail a rule refused (spam,
 * rejected) is kept nowhere but in the mailbox: `delete_downloaded` leaves it there too.
 */
import './mailboxEnv';
import { QueryTypes, type Transaction } from 'sequelize';
import { DepartmentEmail, SpamRule, Ticket } from '../../src/db/models';
import { countQueries, sequelize } from '../../src/db/sequelize';
import { subscribe } from '../../src/events';
import { pollMailbox } from '../../src/mailbox/poll';
import { newEmail, unique, useApi } from '../helpers/app';
import { ledgerOf, rawMail, useDeskMailbox } from './support';
import { dropQueuedMail } from '../helpers/jobs';

afterAll(() => dropQueuedMail());
const api = useApi();
const m = useDeskMailbox(api, 'failimp', ['keep-imap', 'keep-pop3', 'spam-imap', 'spam-pop3', 'lock-imap-del', 'lock-imap-seen', 'lock-pop3-del']);
const tag = unique('fi').toLowerCase();
const POISON = `POISON ${tag}`;
const LOCKED = `LOCKED ${tag}`;
const MISSING_TABLE = `no_such_table_${tag.replace(/[^a-z0-9]/g, '_')}`;

/** The row the test holds locked (in `holder`, a transaction of another connection) while a mail needs it. */
let holder: Transaction | null = null;
let lockedRow = 0;
let unsubscribe: (() => void) | undefined;

beforeAll(() => {
  lockedRow = m.world.outsider.id;
  // Opening the ticket of a marked mail runs, in the import's transaction, a statement that fails:
  // one the database refuses for good (a table that does not exist), or one that meets a row lock
  // another connection holds (NOWAIT: the lock wait timeout InnoDB gives after
  // innodb_lock_wait_timeout, at once).
  unsubscribe = subscribe('ticket.created', async (p, t) => {
    const ticket = await Ticket.findByPk(p.ticketId, { attributes: ['id', 'subject'], transaction: t });
    if (ticket?.subject.includes(POISON)) await sequelize().query(`SELECT id FROM ${MISSING_TABLE}`, { transaction: t, type: QueryTypes.SELECT });
    if (ticket?.subject.includes(LOCKED) && holder) {
      await sequelize().query('SELECT id FROM users WHERE id = ? FOR UPDATE NOWAIT', { replacements: [lockedRow], transaction: t, type: QueryTypes.SELECT });
    }
  });
});
afterAll(async () => {
  unsubscribe?.();
  await holder?.rollback();
});

/** A department mailbox of the test dovecot user `name`, IMAP or POP3, with delete_downloaded on or off. */
async function mailbox(name: string, protocol: 'imap' | 'pop3', deleteDownloaded: 0 | 1): Promise<DepartmentEmail> {
  const box = await m.connect(name, m.world.department.id);
  await box.update({ protocol, port: protocol === 'pop3' ? m.dovecot.ports.pop3 : m.dovecot.ports.imap, delete_downloaded: deleteDownloaded });
  return box;
}

/** Appends a mail with this subject to the user's INBOX: its Message-ID (without <>, as the ledger has it), and its IMAP UID. */
async function deliver(name: string, subject: string): Promise<{ id: string; uid: number }> {
  const id = `${unique('fi')}@sender.test`;
  const { uid } = await m.dovecot.append(m.address(name), await rawMail({ from: newEmail('fi'), to: m.address(name), subject, messageId: `<${id}>` }));
  return { id, uid };
}

/** What is in the user's INBOX: Message-IDs, with whether each is flagged \Seen. */
const inbox = async (name: string) =>
  (await m.dovecot.messages(m.address(name))).map((msg) => ({ id: msg.messageId?.replace(/^<|>$/g, ''), seen: msg.flags.includes('\\Seen') }));

describe('a mail whose import failed', () => {
  it.each([['imap'], ['pop3']] as Array<['imap' | 'pop3']>)('over %s with delete_downloaded: recorded as an error without the SQL, and never deleted', async (protocol) => {
    const name = `keep-${protocol}`;
    const box = await mailbox(name, protocol, 1);
    const { id: bad } = await deliver(name, `${POISON} 1`);
    await deliver(name, 'A good question');
    expect(await pollMailbox(box.id)).toEqual({ fetched: 2, decisions: { error: 1, new_ticket: 1 } });
    expect((await inbox(name)).map((msg) => msg.id)).toEqual([bad]);
    const [failed] = (await ledgerOf(box.id)).filter((l) => l.decision === 'error');
    expect(failed.message_id).toBe(bad);
    // The database's own words and its code; not the statement (Sequelize's message ends with it).
    expect(failed.reason).toMatch(new RegExp(`^The import failed: Table '\\w+\\.${MISSING_TABLE}' doesn't exist \\(ER_NO_SUCH_TABLE\\)$`));
    expect(failed.reason).not.toMatch(/SELECT|sql:/);

    // Later polls delete the mails they import, and still not the failed one.
    await deliver(name, 'Another good question');
    expect(await pollMailbox(box.id)).toEqual({ fetched: 1, decisions: { new_ticket: 1 } });
    expect(await pollMailbox(box.id)).toEqual({ fetched: 0, decisions: {} });
    expect((await inbox(name)).map((msg) => msg.id)).toEqual([bad]);
    expect((await ledgerOf(box.id)).map((l) => l.decision)).toEqual(['error', 'new_ticket', 'new_ticket']);
  });
});

describe('a mail a rule refused', () => {
  const SPAM = `CHEAP PILLS ${tag}`;
  let rule: SpamRule;
  beforeAll(async () => { rule = await SpamRule.create({ text: SPAM, type: 0, event_message: 1, event_comment: 0 }); });
  afterAll(() => rule.destroy());

  it.each([['imap'], ['pop3']] as Array<['imap' | 'pop3']>)('over %s with delete_downloaded: stays in the mailbox (read), the mails imported are deleted', async (protocol) => {
    const name = `spam-${protocol}`;
    const box = await mailbox(name, protocol, 1);
    const { id: spam } = await deliver(name, SPAM);
    await deliver(name, 'A real question');
    expect(await pollMailbox(box.id)).toEqual({ fetched: 2, decisions: { spam: 1, new_ticket: 1 } });
    // IMAP flags it \Seen (POP3 has no flags, and dovecot marks what RETR read).
    expect(await inbox(name)).toEqual([{ id: spam, seen: true }]);

    // Later polls neither import it again nor delete it.
    await deliver(name, 'Another real question');
    expect(await pollMailbox(box.id)).toEqual({ fetched: 1, decisions: { new_ticket: 1 } });
    expect(await pollMailbox(box.id)).toEqual({ fetched: 0, decisions: {} });
    expect((await inbox(name)).map((msg) => msg.id)).toEqual([spam]);
    expect((await ledgerOf(box.id)).map((l) => l.decision)).toEqual(['spam', 'new_ticket', 'new_ticket']);
    if (protocol === 'imap') {
      // Kept on purpose, it is not looked at again: a poll with nothing new reads no ledger line
      // (as the kept mails add up, every poll read them all and flagged them again). POP3 lists
      // the whole mailbox at every poll.
      const { result, queries } = await countQueries(() => pollMailbox(box.id));
      expect(result).toEqual({ fetched: 0, decisions: {} });
      expect(queries.filter((q) => /FROM `incoming_mails`/.test(q))).toEqual([]);
      expect(await inbox(name)).toEqual([{ id: spam, seen: true }]);
    }
  });
});

describe('a transient database error', () => {
  it.each([['imap', 1], ['imap', 0], ['pop3', 1]] as Array<['imap' | 'pop3', 0 | 1]>)(
    'over %s (delete_downloaded %s): fails the poll with nothing recorded for the mail, and the next poll imports it',
    async (protocol, deleteDownloaded) => {
      const name = `lock-${protocol}-${deleteDownloaded ? 'del' : 'seen'}`;
      const box = await mailbox(name, protocol, deleteDownloaded as 0 | 1);
      const { id: first, uid: firstUid } = await deliver(name, 'Before the lock');
      const { id: locked } = await deliver(name, `${LOCKED} ${name}`);
      const { id: after } = await deliver(name, 'After the lock');

      holder = await sequelize().transaction();
      try {
        await sequelize().query('SELECT id FROM users WHERE id = ? FOR UPDATE', { replacements: [lockedRow], transaction: holder, type: QueryTypes.SELECT });
        // IMAP: the batch fails, then one by one the first mail imports and the locked one fails the poll.
        expect(await pollMailbox(box.id)).toEqual({ error: 'The database failed: Lock wait timeout exceeded; try restarting transaction (ER_LOCK_WAIT_TIMEOUT)' });
      } finally {
        await holder.rollback();
        holder = null;
      }
      const failedPoll = await box.reload();
      expect(failedPoll.last_error).toBe('The database failed: Lock wait timeout exceeded; try restarting transaction (ER_LOCK_WAIT_TIMEOUT)');
      expect(failedPoll.poll_failures).toBe(1);
      // Only the mail before it is recorded (imported); the cursor stays before the locked mail.
      expect((await ledgerOf(box.id)).map((l) => [l.message_id, l.decision])).toEqual([[first, 'new_ticket']]);
      if (protocol === 'imap') {
        expect(failedPoll.imap_last_uid).toBe(firstUid);
        // The imported mail is put away at once: deleted, or flagged \Seen.
        expect(await inbox(name)).toEqual([
          ...(deleteDownloaded ? [] : [{ id: first, seen: true }]), { id: locked, seen: false }, { id: after, seen: false },
        ]);
      } else {
        // POP3 applies deletions at QUIT, which a failed poll never sends: all three are still there.
        expect((await inbox(name)).map((msg) => msg.id)).toEqual([first, locked, after]);
      }

      // The lock is gone: the next poll imports the locked mail and the one after it, once each.
      expect(await pollMailbox(box.id)).toEqual({ fetched: 2, decisions: { new_ticket: 2 } });
      expect((await ledgerOf(box.id)).map((l) => [l.message_id, l.decision])).toEqual([[first, 'new_ticket'], [locked, 'new_ticket'], [after, 'new_ticket']]);
      expect(await box.reload()).toMatchObject({ last_error: null, poll_failures: 0 });
      expect(await inbox(name)).toEqual(deleteDownloaded ? [] : [first, locked, after].map((id) => ({ id, seen: true })));
    },
  );
});
