/**
 * What a mail's ticket message says and which files it keeps, read from real MIME mails by the
 * real parser (src/mailbox/parse.ts, quote.ts): nothing a customer sent is lost to the quote
 * trimmer (a forward, headers pasted into a reply), to a text part that only stands in for the HTML,
 * or to a file name the mail did not give.
 */
import './mailboxEnv';
import { MailMessageId, Ticket, TicketAttachment, User } from '../../src/db/models';
import { newEmail, unique, useApi } from '../helpers/app';
import { messagesOf, rawMail, ticketMailsOf, useWorldMailbox } from './support';
import { dropQueuedMail } from '../helpers/jobs';

afterAll(() => dropQueuedMail());
useApi();
const box = useWorldMailbox();
const { ingest } = box;

/** The text of the first message of the ticket a mail opened (it must open one). */
async function openedText(raw: Buffer): Promise<string> {
  const result = await ingest(raw);
  expect(result.decision).toBe('new_ticket');
  return (await messagesOf(result.ticketId!))[0].text;
}

describe('headers', () => {
  it('written in Latin-1 without encoding are read as such, not as UTF-8 (the subject and the new user\'s name keep their letters)', async () => {
    const from = newEmail('latin');
    const raw = Buffer.concat([
      Buffer.from(`From: J\xf6rg Br\xe4uer <${from}>\r\nTo: ${box.mailbox.address}\r\nSubject: Gr\xfc\xdfe aus K\xf6ln\r\nMessage-ID: <${unique('latin')}@x.test>\r\n`, 'latin1'),
      Buffer.from('Content-Type: text/plain; charset=iso-8859-1\r\nContent-Transfer-Encoding: 8bit\r\n\r\nDer Drucker ist kaputt.\r\n', 'latin1'),
    ]);
    const result = await ingest(raw);
    expect(result.decision).toBe('new_ticket');
    const ticket = (await Ticket.findByPk(result.ticketId!))!;
    expect(ticket.subject).toBe('Grüße aus Köln');
    const user = (await User.findByPk(ticket.user_id))!;
    expect([user.firstname, user.lastname]).toEqual(['Jörg', 'Bräuer']);
    // UTF-8 headers (RFC 6532) are read as ever.
    const utf8 = await ingest(Buffer.from(`From: Zoë <${newEmail('utf')}>\r\nTo: ${box.mailbox.address}\r\nSubject: Ça marche pas\r\nMessage-ID: <${unique('utf')}@x.test>\r\n\r\nBonjour.\r\n`, 'utf8'));
    expect((await Ticket.findByPk(utf8.ticketId!))!.subject).toBe('Ça marche pas');
  });
});

describe('the quote trimmer', () => {
  const forwarded = [
    '________________________________', 'From: Billing <billing@vendor.test>', 'Sent: Monday, 2 March 2026 10:00', 'To: Ann <ann@cust.test>',
    'Subject: Invoice 4711 overdue', '', 'Dear customer, invoice 4711 over 120.00 EUR is 30 days overdue.',
  ].join('\n');

  it('keeps what an Outlook forward forwards; an Outlook reply is still cut at the same header block', async () => {
    for (const subject of ['FW: Invoice 4711 overdue', 'WG: Invoice 4711 overdue', 'Fwd: RE: Invoice 4711 overdue']) {
      const text = await openedText(await rawMail({ from: newEmail('fw'), to: box.mailbox.address, subject, text: `Please see the reminder below, is this right?\n\n${forwarded}` }));
      expect(text).toContain('Please see the reminder below');
      expect(text).toContain('From: Billing &lt;billing@vendor.test&gt;');
      expect(text).toContain('invoice 4711 over 120.00 EUR is 30 days overdue.');
    }
    // A reply to a forward (its outermost prefix is a reply's) is a reply: its history goes.
    const reply = await openedText(await rawMail({ from: newEmail('re'), to: box.mailbox.address, subject: 'RE: FW: Invoice 4711 overdue', text: `Paid today.\n\n${forwarded}` }));
    expect(reply).toBe('Paid today.');
  });

  it('keeps headers a customer pasted into a reply, and the question after them', async () => {
    const from = newEmail('mx');
    const opened = await ingest(await rawMail({ from, to: box.mailbox.address, subject: 'Mail to you bounces' }));
    const ticket = (await Ticket.findByPk(opened.ticketId!))!;
    const [stored] = await MailMessageId.findAll({ where: { ticket_id: ticket.id } });
    const text = 'This is what came back:\n\nFrom: MAILER-DAEMON@mx.cust.test\nTo: ann@cust.test\nSubject: Undelivered Mail Returned to Sender\n\nCan you fix your MX?';
    const reply = await ingest(await rawMail({ from, to: box.mailbox.address, subject: `Re: ${ticket.subject}`, inReplyTo: `<${stored.message_id}>`, text }));
    expect(reply.decision).toBe('reply');
    expect((await messagesOf(ticket.id))[1].text).toBe(text);
  });
});

/** A multipart/alternative mail written by hand: the text part and the HTML part as given. */
const alternative = (subject: string, text: string, html: string) => Buffer.from([
  `From: Web Form <${newEmail('form')}>`, `To: ${box.mailbox.address}`, `Subject: ${subject}`, `Message-ID: <${unique('alt')}@form.test>`,
  'MIME-Version: 1.0', 'Content-Type: multipart/alternative; boundary="ALT"', '',
  '--ALT', 'Content-Type: text/plain; charset=utf-8', '', text, '',
  '--ALT', 'Content-Type: text/html; charset=utf-8', '', html, '--ALT--', '',
].join('\r\n'));

const formHtml = '<html><body><h3>Contact form</h3><table><tr><th>Name:</th><td>Jane Roe</td></tr><tr><th>Order:</th><td>4711</td></tr>'
  + '<tr><th>Message:</th><td>The parcel never arrived.</td></tr></table></body></html>';

describe('the text part beside an HTML part', () => {
  it('that only stands in for the HTML gives way to the HTML\'s text: a web form\'s fields are the message', async () => {
    for (const stub of ['This message requires an HTML capable mail client.', 'To view this message, please use an HTML compatible email viewer!']) {
      const text = await openedText(alternative('Contact form', stub, formHtml));
      expect(text).toBe('CONTACT FORM\n\nName: Jane Roe\nOrder: 4711\nMessage: The parcel never arrived.');
    }
  });

  it('that is the HTML as text is the message, also short, also when the HTML adds a name', async () => {
    const text = await openedText(alternative('Printer', 'Thanks, it works now.', '<p>Thanks, it <b>works</b> now.</p><p>Jane Roe</p>'));
    expect(text).toBe('Thanks, it works now.');
  });
});

describe('an HTML-only mail', () => {
  it('reads as its reader sees it: no tracking pixel, nothing hidden, a table\'s cells apart', async () => {
    const html = '<div style="display:none;max-height:0">Preheader nobody sees</div><p hidden>Hidden too</p>'
      + '<p>Our order:</p><table><tr><td>Item</td><td>Qty</td></tr><tr><td>Toner</td><td>2</td></tr></table>'
      + '<img src="https://tracker.test/pixel.gif" width="1" height="1" alt="x"><div style="DISPLAY: none">tracking id 42</div>';
    const text = await openedText(await rawMail({ from: newEmail('html'), to: box.mailbox.address, text: undefined as unknown as string, html }));
    expect(text).toBe('Our order:\n\nItem Qty\nToner 2');
  });
});

describe('a part without a file name', () => {
  const mime = (subject: string, parts: string[][], type = 'multipart/mixed') => Buffer.from([
    `From: Lee <${newEmail('lee')}>`, `To: ${box.mailbox.address}`, `Subject: ${subject}`, `Message-ID: <${unique('part')}@sender.test>`,
    'MIME-Version: 1.0', `Content-Type: ${type}; boundary="P"`, '', ...parts.flatMap((p) => ['--P', ...p, '']), '--P--', '',
  ].join('\r\n'));
  const text = ['Content-Type: text/plain; charset=utf-8', '', 'Please find it attached.'];
  const calendar = 'BEGIN:VCALENDAR\r\nMETHOD:REQUEST\r\nBEGIN:VEVENT\r\nSUMMARY:Onboarding\r\nEND:VEVENT\r\nEND:VCALENDAR';
  const namesOf = async (ticketId: number) => (await TicketAttachment.findAll({ where: { ticket_id: ticketId }, order: [['id', 'ASC']] })).map((f) => f.original_name);

  it('is named with the extension of its type, and allowed_files judges that: a PDF is kept', async () => {
    const pdf = Buffer.from('%PDF-1.4\n%nameless\n');
    const result = await box.ingest(mime('Scan', [text, ['Content-Type: application/pdf', 'Content-Transfer-Encoding: base64', 'Content-Disposition: attachment', '', pdf.toString('base64')]]));
    expect(result.decision).toBe('new_ticket');
    expect(result.reason ?? '').not.toContain('files refused');
    expect(await namesOf(result.ticketId!)).toEqual(['attachment-1.pdf']);
    expect((await ticketMailsOf(result.ticketId!)).map((p) => p.kind)).not.toContain('user_email_attachmentrejected');
    // A calendar file attached without a name is a file (.ics, which the shipped allowed_files refuses).
    const ics = await box.ingest(mime('Calendar', [text, ['Content-Type: text/calendar; charset=utf-8', 'Content-Disposition: attachment', '', calendar]]));
    expect(ics.reason).toContain('files refused: attachment-1.ics');
  });

  it('of a meeting invitation, its calendar form beside the text and HTML, is no file: the organiser is not told of a refusal', async () => {
    const result = await box.ingest(mime('Invitation: Onboarding', [
      ['Content-Type: text/plain; charset=utf-8', '', 'Onboarding, Monday 10:00, room 4.'],
      ['Content-Type: text/html; charset=utf-8', '', '<p>Onboarding, Monday 10:00, room 4.</p>'],
      ['Content-Type: text/calendar; charset="utf-8"; method=REQUEST', 'Content-Transfer-Encoding: 7bit', '', calendar],
    ], 'multipart/alternative'));
    expect(result.decision).toBe('new_ticket');
    expect(result.reason ?? '').not.toContain('files refused');
    expect((await messagesOf(result.ticketId!))[0].text).toBe('Onboarding, Monday 10:00, room 4.');
    expect(await namesOf(result.ticketId!)).toEqual([]);
    expect((await ticketMailsOf(result.ticketId!)).map((p) => p.kind)).not.toContain('user_email_attachmentrejected');
  });
});
