/**
 * Who a mail is from, as the header's own syntax says and nothing encoded inside a display name:
 * an address written inside an RFC 2047 encoded-word is part of the name (RFC 2047 section 5), so
 * it can neither post as a ticket's user or operator nor make a customer's mail look like our own.
 * Also the sender's names as people write them, and a text alternative left empty.
 */
import './mailboxEnv';
import { DepartmentEmail, SpamRule, Ticket, User } from '../../src/db/models';
import { newEmail, unique, useApi } from '../helpers/app';
import { operator, type MailWorld } from '../notifications/support';
import { messagesOf, rawMail, useWorldMailbox } from './support';
import { dropQueuedMail } from '../helpers/jobs';

afterAll(() => dropQueuedMail());
useApi();
const box = useWorldMailbox();
let world: MailWorld;
let mailbox: DepartmentEmail;
beforeAll(() => ({ world, mailbox } = box));
const ingest = box.ingest;

/** A mail written by hand: its headers exactly as given (MailComposer would encode them properly). */
const handWritten = (headers: string[], body = 'Hello.') =>
  Buffer.from([...headers, `To: ${mailbox.address}`, `Message-ID: <${unique('h')}@sender.test>`, 'Content-Type: text/plain; charset=utf-8', '', body, ''].join('\r\n'));

const q = (text: string) => `=?UTF-8?Q?${text.replace(/ /g, '_')}?=`;
const b = (text: string) => `=?UTF-8?B?${Buffer.from(text).toString('base64')}?=`;

async function customerTicket() {
  const customer = newEmail('alice');
  const opened = await ingest(await rawMail({ from: `Alice <${customer}>`, to: mailbox.address, subject: 'Printer is broken' }));
  expect(opened.decision).toBe('new_ticket');
  return { ticket: (await Ticket.findByPk(opened.ticketId!))!, customer };
}

describe('an address inside an encoded display name', () => {
  it('does not make the mail an operator\'s or the customer\'s reply: it is the stranger\'s own new ticket', async () => {
    const { ticket, customer } = await customerTicket();
    const olga = await operator();
    await world.department.sequelize!.query('INSERT INTO operator_departments (user_id, department_id) VALUES (?, ?)', { replacements: [olga.id, world.department.id] });
    const mallory = newEmail('mallory', 'evil.test');
    for (const name of [q(`Olga Op <${olga.email}>`), b(`Alice <${customer}>`)]) {
      const result = await ingest(handWritten([`From: ${name} <${mallory}>`, `Subject: Re: [#${ticket.number}]: Printer is broken`], 'Confirm your password at evil.test.'));
      expect(result).toMatchObject({ decision: 'new_ticket', from: mallory });
      expect(result.ticketId).not.toBe(ticket.id);
      const theirs = (await Ticket.findByPk(result.ticketId!))!;
      expect((await User.findByPk(theirs.user_id))!.email).toBe(mallory);
    }
    // The customer's ticket holds its first message only.
    expect(await messagesOf(ticket.id)).toHaveLength(1);
  });

  it('of a department address is a customer\'s name, not a loop; an address in an encoded Cc name is not copied', async () => {
    const real = newEmail('real');
    const copied = newEmail('copied');
    const result = await ingest(handWritten([
      `From: ${q(`Helpdesk <${mailbox.address}>`)} <${real}>`, `Cc: ${q('x <evil@evil.test>')} <${copied}>`, 'Subject: Our order',
    ]));
    expect(result).toMatchObject({ decision: 'new_ticket', from: real });
    expect(JSON.parse((await Ticket.findByPk(result.ticketId!))!.cc!)).toEqual([copied]);
  });

  it('with an encoded line break and colon is a name: the mail is imported from its address', async () => {
    const sender = newEmail('lee');
    const result = await ingest(handWritten([`From: =?UTF-8?Q?Evil=0D=0ABcc:_v2@victim.test?= <${sender}>`, 'Subject: Hello']));
    expect(result).toMatchObject({ decision: 'new_ticket', from: sender });
  });
});

describe('a sender address that is not an email address', () => {
  it('is refused with its reason, and creates no user', async () => {
    const local = unique('localonly').toLowerCase();
    for (const from of [`Local Only <${local}>`, `<${local}@>`, `<@${local}.test>`, `x <${local}@y@z.test>`]) {
      const result = await ingest(handWritten([`From: ${from}`, 'Subject: No at sign']));
      expect(result).toMatchObject({ decision: 'rejected', reason: 'The From header names no valid email address.', ticketId: null });
    }
    expect(await User.count({ where: { email: local } })).toBe(0);
  });
});

describe('the sender\'s name', () => {
  it('"Lastname, Firstname" (Outlook\'s form, also encoded) gives the first and last name; a plain name splits at its first space', async () => {
    const cases: Array<[string, string, string | null]> = [
      ['"Schmidt, Eva"', 'Eva', 'Schmidt'], ['=?iso-8859-1?Q?M=FCller=2C_Hans?=', 'Hans', 'Müller'], ['Ada King Lovelace', 'Ada', 'King Lovelace'],
    ];
    for (const [name, firstname, lastname] of cases) {
      const from = newEmail('name');
      const result = await ingest(handWritten([`From: ${name} <${from}>`, 'Subject: Names']));
      expect(result.decision).toBe('new_ticket');
      expect(await User.findOne({ where: { email: from }, attributes: ['firstname', 'lastname'], raw: true })).toEqual({ firstname, lastname });
    }
  });
});

describe('a text alternative of white space only', () => {
  it('is no text: the HTML alternative gives the message', async () => {
    for (const empty of ['', ' ']) {
      const raw = Buffer.from([
        `From: Kim <${newEmail('kim')}>`, `To: ${mailbox.address}`, 'Subject: Empty text part', `Message-ID: <${unique('e')}@sender.test>`,
        'MIME-Version: 1.0', 'Content-Type: multipart/alternative; boundary="A"', '',
        '--A', 'Content-Type: text/plain; charset=utf-8', '', empty, '',
        '--A', 'Content-Type: text/html; charset=utf-8', '', '<p>The real content is only in HTML.</p>', '--A--', '',
      ].join('\r\n'));
      const result = await ingest(raw);
      expect(result.decision).toBe('new_ticket');
      const [message] = await messagesOf(result.ticketId!);
      expect(message.text).toContain('The real content is only in HTML.');
    }
  });
});

describe('spam in the HTML alternative', () => {
  it('behind a harmless text part is spam, as it is in the text', async () => {
    const marker = unique('lottery').toLowerCase();
    const rule = await SpamRule.create({ text: `win\\s+${marker}`, type: 0, event_message: 1, event_comment: 0 });
    try {
      const hidden = await ingest(await rawMail({ from: newEmail('s'), to: mailbox.address, text: 'Hello, a question.', html: `<p>Hello</p><p>WIN <b>${marker}</b> today</p>` }));
      expect(hidden).toMatchObject({ decision: 'spam' });
      const clean = await ingest(await rawMail({ from: newEmail('s'), to: mailbox.address, text: 'Hello, a question.', html: '<p>Hello, a question.</p>' }));
      expect(clean.decision).toBe('new_ticket');
    } finally {
      await rule.destroy();
    }
  });
});
