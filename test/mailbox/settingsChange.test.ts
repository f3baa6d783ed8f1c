/**
 * A mailbox's settings changed through the API while it is being polled (src/mailbox/pollGuard.ts):
 * the poll stops at its next batch and writes nothing over the change. Another account (the API
 * resets the cursor): the old account's remaining mail is not imported, and the next poll imports
 * the new account's, though both mailboxes have the same UIDVALIDITY (the old poll's cursor
 * written over the reset hid it). Disabled: the rest of the mailbox is neither imported nor flagged.
 * Deleted, between batches or in the middle of one: the poll ends quietly, with no import recorded
 * as an error and no failure. The poll is held where a test wants it by a subscriber of the
 * batch's ticket.created (in the batch's transaction, or after its commit), never by a time.
 */
import './backlogEnv';
import { Op } from 'sequelize';
import { DepartmentEmail, IncomingMail, Ticket } from '../../src/db/models';
import { afterOutermostCommit } from '../../src/db/transaction';
import { subscribe } from '../../src/events';
import { logger } from '../../src/logger';
import { pollMailbox } from '../../src/mailbox/poll';
import { unique, useApi, newEmail } from '../helpers/app';
import { expectSuccess } from '../helpers/envelope';
import type { Response } from 'supertest';
import { runningStatements } from '../helpers/races';
import { waitFor } from '../helpers/smtp';
import { ledgerOf, rawMail, useDeskMailbox } from './support';
import { dropQueuedMail } from '../helpers/jobs';

afterAll(() => dropQueuedMail());
const api = useApi();
const m = useDeskMailbox(api, 'chg', ['old', 'other', 'oldin', 'otherin', 'off', 'gone', 'gonein', 'popoff']);
const tag = unique('chg').toLowerCase();
/** Mails in the old account: three batches of 10 (backlogEnv), the poll held after the first. */
const MAILS = 25;
const BATCH = 10;

/** The API's read of the department email it changes (locked for the write): it waits for a batch's locks. */
const LOCKING_READ = 'FROM `department_emails` WHERE `id` IN (%FOR UPDATE';
const emailPath = (mailbox: DepartmentEmail) => `/api/ticket/department/${mailbox.department_id}/email/${mailbox.id}`;

/** Mails to the department address `to` in the dovecot user `name`'s INBOX, with subjects `<label> <i> <tag>`. */
async function fill(name: string, to: string, label: string, n: number): Promise<void> {
  await m.dovecot.appendAll(m.address(name), await Promise.all(Array.from({ length: n }, (_, i) => rawMail({ from: newEmail('chg'), to, subject: `${label} ${i} ${tag}` }))));
}

/** The subjects of the mails the ledger has of a mailbox, in order. */
const subjectsOf = async (mailbox: DepartmentEmail) => (await ledgerOf(mailbox.id)).map((l) => l.subject);
const numbered = (label: string, from: number, to: number) => Array.from({ length: to - from }, (_, i) => `${label} ${from + i} ${tag}`);
/** Which of the user's mails are flagged \Seen, in UID order. */
const seen = async (name: string) => (await m.dovecot.messages(m.address(name))).map((msg) => msg.flags.includes('\\Seen'));

/**
 * Holds the poll at the ticket of the mail with this subject: `inside` its batch's transaction
 * (its locks held), or `after` the batch's commit (before the next batch); `release` lets it go on.
 */
function holdAt(subject: string, where: 'inside' | 'after') {
  let release!: () => void;
  const released = new Promise<void>((resolve) => { release = resolve; });
  let reach!: () => void;
  const reached = new Promise<void>((resolve) => { reach = resolve; });
  const hold = async () => {
    reach();
    await released;
  };
  const unsubscribe = subscribe('ticket.created', async (p, t) => {
    const ticket = await Ticket.findByPk(p.ticketId, { attributes: ['id', 'subject'], transaction: t });
    if (ticket?.subject !== subject) return;
    if (where === 'inside') await hold();
    else afterOutermostCommit(t, hold);
  });
  return {
    /** Resolves once the poll is held (fails if it ends without being held). */
    reachedBy: (polling: Promise<unknown>) => Promise.race([reached, polling.then((r) => { throw new Error(`The poll ended without being held: ${JSON.stringify(r)}`); })]),
    release: () => { unsubscribe(); release(); },
  };
}

/**
 * Polls the mailbox, holds the poll at the mail with this subject (`where`), makes `change` (an API
 * request) meanwhile, and lets the poll go on once the change is answered, or, held inside a
 * batch, once the change waits for the batch's locks. The poll's result.
 */
async function pollChangedMidway(mailbox: DepartmentEmail, subject: string, where: 'inside' | 'after', change: () => Promise<Response>): Promise<unknown> {
  const held = holdAt(subject, where);
  const polling = pollMailbox(mailbox.id);
  try {
    await held.reachedBy(polling);
    const answered = change();
    if (where === 'inside') await waitFor(async () => (await runningStatements(LOCKING_READ)) > 0, 15000, 'the change to wait for the batch');
    else await answered;
    held.release();
    const res = await answered;
    expect({ status: res.status, outcome: res.body.status }).toEqual({ status: 200, outcome: 'success' });
  } finally {
    held.release();
  }
  return polling;
}

/** The logger's error lines and warnings about a mailbox (the poll's own failure line is its result). */
function watchLogs() {
  const error = jest.spyOn(logger, 'error');
  const warn = jest.spyOn(logger, 'warn');
  return {
    about: (id: number) => [...error.mock.calls, ...warn.mock.calls].filter(([fields]) => (fields as { mailbox?: number })?.mailbox === id),
    restore: () => { error.mockRestore(); warn.mockRestore(); },
  };
}

describe('a mailbox changed to another account during its poll', () => {
  it.each([['after', 'old', 'other'], ['inside', 'oldin', 'otherin']] as Array<['after' | 'inside', string, string]>)(
    'held %s a batch: the poll stops, the old account\'s other mails stay, and the new account\'s (same UIDVALIDITY) are imported',
    async (where, oldName, otherName) => {
      const mailbox = await m.connect(oldName, m.world.department.id);
      const address = m.address(oldName);
      await fill(oldName, address, `Old ${where}`, MAILS);
      await fill(otherName, address, `New ${where}`, 3);
      // The same UIDVALIDITY on both accounts: only the reset cursor tells the new account's UIDs from the old one's.
      await m.dovecot.setUidValidity(address, 424242);
      await m.dovecot.setUidValidity(m.address(otherName), 424242);

      expect(await pollChangedMidway(mailbox, `Old ${where} ${BATCH - 1} ${tag}`, where, async () => api.put(emailPath(mailbox), { username: m.address(otherName), password: 'secret-desk' })))
        .toEqual({ skipped: 'The mailbox settings were changed during the poll.' });
      // The first batch was imported before the change (held inside it, the change waited for its
      // commit); nothing after it.
      expect(await subjectsOf(mailbox)).toEqual(numbered(`Old ${where}`, 0, BATCH));
      expect(await seen(oldName)).toEqual(Array.from({ length: MAILS }, (_, i) => i < BATCH));
      expect(await mailbox.reload()).toMatchObject({ imap_uidvalidity: null, imap_last_uid: 0, username: m.address(otherName), last_error: null, poll_failures: 0 });

      // The next poll reads the new account from its start.
      expect(await pollMailbox(mailbox.id)).toEqual({ fetched: 3, decisions: { new_ticket: 3 } });
      expect((await subjectsOf(mailbox)).slice(BATCH)).toEqual(numbered(`New ${where}`, 0, 3));
      expect(await mailbox.reload()).toMatchObject({ imap_uidvalidity: '424242', imap_last_uid: 3 });
      expect(await seen(oldName)).toEqual(Array.from({ length: MAILS }, (_, i) => i < BATCH));
    },
  );
});

it('another account set through the API starts the cursor and the sweep of delete_downloaded again', async () => {
  const mailbox = await m.connect('sweptold', m.world.department.id);
  // The old account read up to its ninth mail and swept up to its seventh.
  await DepartmentEmail.update({ imap_uidvalidity: '424242', imap_last_uid: 9, imap_swept_uid: 7, delete_downloaded: 1 }, { where: { id: mailbox.id } });
  expectSuccess(await api.put(emailPath(mailbox), { username: m.address('sweptnew'), password: 'secret-desk' }), 'Successfully updated the department email!');
  expect(await mailbox.reload()).toMatchObject({ imap_uidvalidity: null, imap_last_uid: 0, imap_swept_uid: 0 });
});

it('a mailbox disabled during its poll: the rest of it is neither imported nor flagged \\Seen', async () => {
  const mailbox = await m.connect('off', m.world.department.id);
  await fill('off', m.address('off'), 'Off', MAILS);
  expect(await pollChangedMidway(mailbox, `Off ${BATCH - 1} ${tag}`, 'after', async () => api.put(emailPath(mailbox), { type: 0 })))
    .toEqual({ skipped: 'The mailbox was disabled during the poll.' });
  expect(await subjectsOf(mailbox)).toEqual(numbered('Off', 0, BATCH));
  expect(await seen('off')).toEqual(Array.from({ length: MAILS }, (_, i) => i < BATCH));
  // Its cursor is that of the batch imported before (enabled again, the mailbox goes on from there).
  expect((await mailbox.reload()).imap_last_uid).toBe(BATCH);
});

it('a POP3 mailbox disabled during its poll imports nothing more', async () => {
  const mailbox = await m.connect('popoff', m.world.department.id);
  expectSuccess(await api.put(emailPath(mailbox), { protocol: 'pop3', port: m.dovecot.ports.pop3, password: 'secret-desk' }), 'Successfully updated the department email!');
  await fill('popoff', m.address('popoff'), 'Pop off', 6);
  // POP3 imports one mail per transaction: held after the third.
  expect(await pollChangedMidway(mailbox, `Pop off 2 ${tag}`, 'after', async () => api.put(emailPath(mailbox), { type: 0 })))
    .toEqual({ skipped: 'The mailbox was disabled during the poll.' });
  expect(await subjectsOf(mailbox)).toEqual(numbered('Pop off', 0, 3));
});

describe('a mailbox deleted during its poll', () => {
  it.each([['after', 'gone'], ['inside', 'gonein']] as Array<['after' | 'inside', string]>)('held %s a batch: the poll ends quietly, nothing recorded as an error', async (where, name) => {
    const mailbox = await m.connect(name, m.world.department.id);
    await fill(name, m.address(name), `Gone ${where}`, MAILS);
    const logs = watchLogs();
    try {
      expect(await pollChangedMidway(mailbox, `Gone ${where} ${BATCH - 1} ${tag}`, where, async () => api.del(emailPath(mailbox))))
        .toEqual({ skipped: 'The mailbox was deleted during the poll.' });
      expect(logs.about(mailbox.id)).toEqual([]);
    } finally {
      logs.restore();
    }
    expect(await DepartmentEmail.findByPk(mailbox.id)).toBeNull();
    // The lines of its mails (department_email_id null now): the first batch's, imported before; none an error.
    const lines = await IncomingMail.findAll({ where: { subject: { [Op.like]: `Gone ${where} % ${tag}` } }, order: [['id', 'ASC']] });
    expect(lines.map((l) => [l.subject, l.decision])).toEqual(numbered(`Gone ${where}`, 0, BATCH).map((subject) => [subject, 'new_ticket']));
  });
});
