/**
 * A message's text is stored rich text (src/content/html.ts): HTML through the allow-list, or plain
 * text as sent. Its mails show it as written: the HTML as markup in the HTML part and read as text
 * in the text part; plain text escaped (line breaks as <br>) in HTML and as it is in text. Every
 * other merge field (names, subjects) stays escaped. Written through the API, as integrators send it.
 */
import { Ticket } from '../../src/db/models';
import { MESSAGE_TYPE } from '../../src/db/models/TicketMessage';
import { RichText, renderTemplate, richText } from '../../src/ticket/mail/render';
import { newEmail, useApi } from '../helpers/app';
import type { ReceivedMail } from '../helpers/smtp';
import { addMessage, mailAbout, mailTo, openTicket, settled, useMailWorld } from './support';

const api = useApi();
const m = useMailWorld();

const ok = (res: { status: number; body: any }) => {
  expect([res.status, res.body.status]).toEqual([200, 'success']);
  return res.body.data;
};
const htmlOf = (mail: ReceivedMail) => mail.parsed.html as string;
const textOf = (mail: ReceivedMail) => mail.parsed.text ?? '';

const FORMATTED = '<p>Hello <b>Alice</b>,</p>\n<p>Try <a href="https://kb.test/a?x=1&y=2">this article</a> &amp; <i>that</i>.</p>';

/** A ticket opened through the API, its opening mails sent. */
async function apiTicket(userFirstname = 'Ada'): Promise<{ ticket: Ticket; email: string }> {
  const email = newEmail('rich');
  const created = ok(await api.post('/api/ticket/ticket', {
    brand: m.world.brand.id, department: m.world.department.id, status: m.world.openStatus, priority: m.world.priorityId,
    subject: 'Printer <b>jam</b>', text: 'It jams.', user_email: email, user_firstname: userFirstname, send_operators_email: 0,
  }));
  const ticket = (await Ticket.findByPk(created.id))!;
  await mailTo(m.smtp, ticket, email, 'user_ticket_opened');
  await settled(ticket.id);
  return { ticket, email };
}

describe('a formatted operator reply', () => {
  it('goes out as HTML in the HTML part and as text in the text part; the subject stays escaped', async () => {
    const { ticket, email } = await apiTicket();
    const reply = ok(await api.post('/api/ticket/message', { ticket_id: ticket.id, user_id: m.world.direct.id, text: FORMATTED }));
    const mail = await mailAbout(m.smtp, ticket, reply.id, 'the formatted reply');
    expect(mail.envelopeTo).toEqual([email]);

    const html = htmlOf(mail);
    expect(html).toContain('<p>Hello <b>Alice</b>,</p>');
    expect(html).toContain('<a href="https://kb.test/a?x=1&amp;y=2">this article</a> &amp; <i>that</i>.');
    expect(html).not.toMatch(/&lt;\/?(p|b|a|i)\b/);
    const text = textOf(mail);
    expect(text).toContain('Hello Alice,\n\nTry this article (https://kb.test/a?x=1&y=2) & that.');
    expect(text).not.toMatch(/<\/?(p|b|a|i)\b/);
    // The subject is plain text: its "<b>" is text, in every part.
    expect(mail.parsed.subject).toBe(`Re: [#${ticket.number}]: Printer <b>jam</b>`);
  });

  it('in plain text is escaped, its line breaks as <br>, and kept as written in the text part', async () => {
    const { ticket } = await apiTicket();
    const reply = ok(await api.post('/api/ticket/message', { ticket_id: ticket.id, user_id: m.world.direct.id, text: 'If a < b & "c" > d,\nthen call us.' }));
    const mail = await mailAbout(m.smtp, ticket, reply.id, 'the plain reply');
    expect(htmlOf(mail)).toContain('If a &lt; b &amp; &quot;c&quot; &gt; d,<br>\nthen call us.');
    expect(textOf(mail)).toContain('If a < b & "c" > d,\nthen call us.');
  });
});

describe('a formatted user reply', () => {
  it('reaches the operators as HTML, while the author\'s name stays escaped', async () => {
    const { ticket } = await apiTicket('<i>Eve</i>');
    const reply = ok(await api.post('/api/ticket/message', { ticket_id: ticket.id, user_id: ticket.user_id, text: '<p>It <u>still</u> jams.</p>' }));
    // To the department's operators (nobody is assigned).
    const mail = await mailAbout(m.smtp, ticket, reply.id, 'an operator\'s mail about the reply');
    expect([m.world.direct.email, m.world.grouped.email]).toContain(mail.envelopeTo[0]);
    const html = htmlOf(mail);
    expect(html).toContain('<p>It <u>still</u> jams.</p>');
    expect(html).toContain('&lt;i&gt;Eve&lt;/i&gt; replied to ticket');
    expect(textOf(mail)).toContain('It still jams.');
    expect(textOf(mail)).toContain('<i>Eve</i> replied to ticket');
    expect(mail.parsed.subject).toBe(`[#${ticket.number}]: New reply from <i>Eve</i>`);
  });
});

describe('a formatted forward', () => {
  it('goes out as HTML in the HTML part and as text in the text part', async () => {
    const { ticket } = await apiTicket();
    const vendor = newEmail('vendor');
    const forward = ok(await api.post('/api/ticket/forward', {
      ticket_id: ticket.id, user_id: m.world.grouped.id, text: '<p>See <b>below</b>:</p><ul><li>one</li><li>two</li></ul>', subject: 'FYI', to_address: [vendor],
    }));
    const mail = await mailAbout(m.smtp, ticket, forward.id, 'the forward');
    expect(mail.envelopeTo).toEqual([vendor]);
    expect(htmlOf(mail)).toContain('<p>See <b>below</b>:</p><ul><li>one</li><li>two</li></ul>');
    expect(htmlOf(mail)).not.toContain('&lt;');
    expect(textOf(mail)).toContain('See below:\n- one\n- two');
  });

  it('in plain text is escaped in HTML and as written in text', async () => {
    const { ticket } = await apiTicket();
    const vendor = newEmail('vendor');
    const forward = ok(await api.post('/api/ticket/forward', {
      ticket_id: ticket.id, user_id: m.world.grouped.id, text: 'Cost: 3 < 5 & rising\nsee you', subject: 'FYI', to_address: [vendor],
    }));
    const mail = await mailAbout(m.smtp, ticket, forward.id, 'the forward');
    expect(htmlOf(mail)).toContain('Cost: 3 &lt; 5 &amp; rising<br>\nsee you');
    expect(textOf(mail)).toContain('Cost: 3 < 5 & rising\nsee you');
  });
});

describe('rich text stored before the allow-list', () => {
  it('is sanitised again when it is mailed: no script, handler or javascript: link reaches the mail', async () => {
    // Written straight to the table (as rows of before the allow-list were), not through the API.
    const { ticket, user } = await openTicket(m.world, { sendUserEmail: false, sendOperatorsEmail: false });
    const reply = await addMessage(ticket, m.world.direct, {
      type: MESSAGE_TYPE.MESSAGE,
      text: '<p onclick="steal()">Hi <b>there</b></p><script>alert(1)</script><a href="javascript:steal()">click</a><iframe src="https://evil.test"></iframe>',
    });
    const mail = await mailAbout(m.smtp, ticket, reply.id, 'the reply');
    expect(mail.envelopeTo).toEqual([user.email]);
    const html = htmlOf(mail);
    expect(html).toContain('<p>Hi <b>there</b></p>');
    for (const bad of ['onclick', '<script', 'alert(1)', 'javascript:', '<iframe', 'evil.test']) expect([bad, html.includes(bad)]).toEqual([bad, false]);
    expect(textOf(mail)).toContain('Hi there');
    expect(textOf(mail)).not.toContain('alert(1)');
  });
});

describe('the renderer', () => {
  it('inserts a RichText as sanitised HTML or escaped plain text, and every other value escaped, filters ignored', () => {
    const context = { message: { text: richText('<p>A <b>b</b></p><script>x()</script>') }, user: { formatted_name: '<b>Bob</b>' } };
    expect(renderTemplate('<div>{{ message.text|raw }}</div> {{ user.formatted_name|raw }}', context, 'html')).toBe('<div><p>A <b>b</b></p></div> &lt;b&gt;Bob&lt;/b&gt;');
    expect(renderTemplate('{{ message.text }} / {{ user.formatted_name }}', context, 'text')).toBe('A b / <b>Bob</b>');
    const plain = { message: { text: richText('x & y\n<3') } };
    expect(renderTemplate('{{ message.text }}', plain, 'html')).toBe('x &amp; y<br>\n&lt;3');
    expect(renderTemplate('{{ message.text }}', plain, 'text')).toBe('x & y\n<3');
    // A RichText is a leaf: nothing inside it can be named.
    expect(renderTemplate('[{{ message.text.stored }}][{{ message.text.html }}]', context, 'html')).toBe('[][]');
    expect(context.message.text).toBeInstanceOf(RichText);
  });

  it('leaves a message\'s text that looks like a merge field as it is', () => {
    const plain = { message: { text: richText('{{ user.email }}') }, user: { email: 'secret@x.test' } };
    expect(renderTemplate('{{ message.text }}', plain, 'html')).toBe('{{ user.email }}');
    expect(renderTemplate('{{ message.text }}', { ...plain, message: { text: richText('<p>{{ user.email }}</p>') } }, 'text')).toBe('{{ user.email }}');
  });
});
