/**
 * Mail from Outlook and Exchange, through a real dovecot and a real SMTP server: a winmail.dat
 * (TNEF) becomes the files and the text inside it; an inline image referred to by `cid:` with no
 * Content-Disposition is kept as a file of its message; the ticket's mail carries Thread-Topic and
 * Thread-Index so Outlook files the replies in one conversation.
 */
import './mailboxEnv';
import { DepartmentEmail, IncomingMail, Ticket, TicketAttachment } from '../../src/db/models';
import { pollMailbox } from '../../src/mailbox/poll';
import { findUpload, readUpload } from '../../src/storage/uploads';
import type { Dovecot } from '../helpers/dovecot';
import { newEmail, unique, useApi } from '../helpers/app';
import { expectSuccess } from '../helpers/envelope';
import { waitFor, type TestSmtp } from '../helpers/smtp';
import type { MailWorld } from '../notifications/support';
import { useDeskMailbox, messagesOf, rawMail } from './support';
import { dropQueuedMail } from '../helpers/jobs';
import { attribute, props, tnef, z } from './tnefBuilder';

afterAll(() => dropQueuedMail());
const api = useApi();
const box = useDeskMailbox(api, 'ol');
const desk = box.desk;
let dovecot: Dovecot;
let smtp: TestSmtp;
let world: MailWorld;
let mailbox: DepartmentEmail;
beforeAll(() => ({ dovecot, smtp, world, mailbox } = box));

async function deliver(raw: Buffer): Promise<IncomingMail> {
  const { uid, uidValidity } = await dovecot.append(desk, raw);
  await pollMailbox(mailbox.id);
  return (await IncomingMail.findOne({ where: { department_email_id: mailbox.id, remote_uid: `${uidValidity}:${uid}` } }))!;
}

const filesOf = async (ticketId: number) => {
  const rows = await TicketAttachment.findAll({ where: { ticket_id: ticketId }, order: [['id', 'ASC']] });
  return Promise.all(rows.map(async (r) => ({ name: r.original_name, messageId: r.message_id, contents: await readUpload((await findUpload(r.upload_hash))!) })));
};

describe('an Outlook mail in TNEF', () => {
  it('opens a ticket with the text and the files inside winmail.dat', async () => {
    const png = Buffer.from([137, 80, 78, 71, 13, 10, 26, 10, 42, 42]);
    const winmail = tnef(
      attribute(1, 0x0002800c, z('The scanner jams on page 2.')),
      attribute(2, 0x00069002, Buffer.alloc(14)),
      attribute(2, 0x00018010, z('JAM~1.PNG')),
      attribute(2, 0x0006800f, png),
      attribute(2, 0x00069005, props([{ type: 0x1f, id: 0x3707, value: z('jam on page 2.png', 'utf16le') }])),
    );
    // What Exchange sends: an empty text part and the TNEF part.
    const raw = await rawMail({
      from: newEmail('outlook'), to: desk, subject: 'Scanner', text: '',
      attachments: [{ filename: 'winmail.dat', content: winmail, contentType: 'application/ms-tnef' }],
    });
    const line = await deliver(raw);
    expect(line.decision).toBe('new_ticket');
    const [message] = await messagesOf(line.ticket_id!);
    expect(message.text).toBe('The scanner jams on page 2.');
    expect(await filesOf(line.ticket_id!)).toEqual([{ name: 'jam on page 2.png', messageId: message.id, contents: png }]);
  });

  it('that cannot be read is kept as winmail.dat, a file like any other (here refused by allowed_files)', async () => {
    const line = await deliver(await rawMail({
      from: newEmail('broken'), to: desk, subject: 'Broken TNEF', attachments: [{ filename: 'winmail.dat', content: Buffer.from('not tnef at all'), contentType: 'application/ms-tnef' }],
    }));
    expect(line.decision).toBe('new_ticket');
    expect(line.reason).toContain('files refused: winmail.dat');
    expect((await messagesOf(line.ticket_id!))[0].text).toBe('Hello, my printer is broken.');
  });
});

describe('an inline image without Content-Disposition', () => {
  it('is kept as a file of its message', async () => {
    const from = newEmail('inline');
    const png = Buffer.from([137, 80, 78, 71, 13, 10, 26, 10, 7, 7, 7]);
    const boundary = 'rel-boundary-1';
    const raw = Buffer.from([
      `From: ${from}`, `To: ${desk}`, 'Subject: Screenshot inline', `Message-ID: <${unique('i')}@outlook.test>`, 'MIME-Version: 1.0',
      `Content-Type: multipart/related; boundary="${boundary}"; type="text/html"`, '',
      `--${boundary}`, 'Content-Type: text/html; charset=utf-8', '', '<p>The error:</p><img src="cid:image001.png@01DA0000">', '',
      `--${boundary}`, 'Content-Type: image/png', 'Content-Transfer-Encoding: base64', 'Content-ID: <image001.png@01DA0000>', '', png.toString('base64'), '',
      `--${boundary}--`, '',
    ].join('\r\n'));
    expect(raw.toString()).not.toMatch(/content-disposition/i);
    const line = await deliver(raw);
    expect(line.decision).toBe('new_ticket');
    const [message] = await messagesOf(line.ticket_id!);
    expect(message.text).toBe('The error:');
    expect(await filesOf(line.ticket_id!)).toEqual([{ name: 'attachment-1.png', messageId: message.id, contents: png }]);
  });
});

describe('mail to Outlook', () => {
  it('carries Thread-Topic and a Thread-Index that grows from the same header', async () => {
    const from = newEmail('threads');
    const line = await deliver(await rawMail({ from, to: desk, subject: 'Monitor flickers' }));
    const ticket = (await Ticket.findByPk(line.ticket_id!))!;
    const ack = await waitFor(() => smtp.mailsTo(from)[0], 60000, 'the acknowledgement');
    expectSuccess(await api.post('/api/ticket/message', { ticket_id: ticket.id, user_id: world.direct.id, text: 'Try another cable.' }), 'Successfully created new message!');
    const reply = await waitFor(() => smtp.mailsTo(from).find((m) => m.parsed.text?.includes('another cable')), 60000, 'the reply');
    for (const m of [ack, reply]) expect(m.parsed.headers.get('thread-topic')).toBe('Monitor flickers');
    const [a, b] = [ack, reply].map((m) => Buffer.from(String(m.parsed.headers.get('thread-index')), 'base64'));
    expect(a.length).toBeGreaterThanOrEqual(22);
    expect(b.subarray(0, 22)).toEqual(a.subarray(0, 22));
    expect([a.length % 5, b.length % 5]).toEqual([2, 2]);
  });
});
