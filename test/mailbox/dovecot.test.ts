import { existsSync } from 'node:fs';
import net from 'node:net';
import { ImapFlow } from 'imapflow';
import MailComposer from 'nodemailer/lib/mail-composer';
import { startDovecot, type Dovecot } from '../helpers/dovecot';

// The throwaway dovecot of test/helpers/dovecot.ts: APPEND, listing, UIDVALIDITY reset, users.

const SUPPORT = { user: 'support@example.test', password: 'secret1' };
let dc: Dovecot;

beforeAll(async () => {
  dc = await startDovecot([SUPPORT]);
});
afterAll(() => dc?.stop());

const message = (messageId: string) => new MailComposer({
  from: 'alice@example.test', to: SUPPORT.user, subject: 'Hello', text: 'Grüße', messageId,
}).compile().build();

/** A fresh session's view of the mailbox (STARTTLS, trusting the server's certificate). */
async function status(user: { user: string; password: string }, mailbox = 'INBOX') {
  const c = new ImapFlow({
    host: dc.host, port: dc.ports.imap, secure: false, doSTARTTLS: true, tls: { ca: dc.cert },
    auth: { user: user.user, pass: user.password }, logger: false,
  });
  await c.connect();
  try {
    const box = await c.mailboxOpen(mailbox);
    return { uidValidity: String(box.uidValidity), exists: box.exists };
  } finally {
    await c.logout();
  }
}

test('append() returns the UID and UIDVALIDITY; messages() lists UID, flags and Message-ID', async () => {
  const first = await dc.append(SUPPORT.user, await message('<one@example.test>'));
  const second = await dc.append(SUPPORT.user, await message('<two@example.test>'), { flags: ['\\Seen', '\\Flagged'] });
  expect(first.uid).toBe(1);
  expect(second.uid).toBe(2);
  expect(first.uidValidity).toMatch(/^\d+$/);
  expect(second.uidValidity).toBe(first.uidValidity);

  const list = await dc.messages(SUPPORT.user);
  expect(list.map(({ uid, messageId }) => ({ uid, messageId }))).toEqual([
    { uid: 1, messageId: '<one@example.test>' },
    { uid: 2, messageId: '<two@example.test>' },
  ]);
  expect(list[0].flags).not.toContain('\\Seen');
  expect(list[1].flags).toEqual(expect.arrayContaining(['\\Flagged', '\\Seen']));
  expect((await status(SUPPORT)).uidValidity).toBe(first.uidValidity);
});

test('append() to another mailbox creates it; messages() of an empty one is []', async () => {
  const { uid } = await dc.append(SUPPORT.user, await message('<archived@example.test>'), { mailbox: 'Archive' });
  expect(uid).toBe(1);
  expect((await dc.messages(SUPPORT.user, 'Archive')).map((m) => m.messageId)).toEqual(['<archived@example.test>']);
  await dc.append(SUPPORT.user, await message('<other@example.test>'), { mailbox: 'Archive' }); // existing mailbox: fine
  await dc.append(SUPPORT.user, 'Subject: x\r\n\r\ny\r\n', { mailbox: 'Empty' });
  const c = new ImapFlow({ host: dc.host, port: dc.ports.imaps, secure: true, tls: { ca: dc.cert }, auth: { user: SUPPORT.user, pass: SUPPORT.password }, logger: false });
  await c.connect();
  try {
    await c.mailboxOpen('Empty');
    expect(await c.messageDelete('1:*')).toBe(true);
  } finally {
    await c.logout();
  }
  expect(await dc.messages(SUPPORT.user, 'Empty')).toEqual([]);
});

test('setUidValidity() changes UIDVALIDITY as a fresh session sees it', async () => {
  const before = await status(SUPPORT);
  const value = Number(before.uidValidity) + 12345;
  await dc.setUidValidity(SUPPORT.user, value);
  expect(await status(SUPPORT)).toEqual({ uidValidity: String(value), exists: before.exists });
  expect((await dc.append(SUPPORT.user, await message('<after-reset@example.test>'))).uidValidity).toBe(String(value));
});

test('addUser() adds a login without a restart', async () => {
  const sales = { user: 'sales@example.test', password: 'secret2' };
  await expect(dc.append(sales.user, 'Subject: x\r\n\r\ny\r\n')).rejects.toThrow(/no user/);
  await dc.messages(SUPPORT.user); // a login just before: dovecot has read the passwd-file this second
  await dc.addUser(sales);
  expect((await dc.append(sales.user, await message('<sales@example.test>'))).uid).toBe(1);
  expect((await dc.messages(sales.user)).map((m) => m.messageId)).toEqual(['<sales@example.test>']);
  expect(await status(sales)).toMatchObject({ exists: 1 });
});

test('stop() kills the server and removes its directory, and may be called again', async () => {
  const other = await startDovecot([SUPPORT]);
  expect(other.ports.imap).not.toBe(dc.ports.imap);
  expect(other.cert).toMatch(/^-----BEGIN CERTIFICATE-----/);
  await other.stop();
  await other.stop();
  expect(existsSync(other.dir)).toBe(false);
  const refused = await new Promise<boolean>((resolve) => {
    const s = net.connect(other.ports.imap, '127.0.0.1');
    s.once('connect', () => { s.destroy(); resolve(false); });
    s.once('error', () => resolve(true));
  });
  expect(refused).toBe(true);
});
