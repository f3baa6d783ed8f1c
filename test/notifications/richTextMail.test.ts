/**
 * A message's text is stored rich text (src/content/html.ts): HTML through the allow-list, or plain
 * text as sent. Its mails show it as written: the HTML as markup in the HTML part and read as text
 * in the text part; plain text escaped (line breaks as <br>) in HTML and as it is in text. Every
 * other merge field (names, subjects) stays escaped. Written through the API, as integrators send it.
 */
import { Brand, EmailTemplate, Ticket } from '../../src/db/models';
import { sequelize } from '../../src/db/sequelize';
import { DEFAULT_EMAIL_TEMPLATES } from '../../src/seed/emailTemplates';
import * as m034 from '../../migrations/034_message_text_block';
import { MESSAGE_TYPE } from '../../src/db/models/TicketMessage';
import { RichText, renderTemplate, richText } from '../../src/ticket/mail/render';
import { newEmail, unique, useApi } from '../helpers/app';
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
    // Its paragraphs stand in a <div>: a block element inside a <p> is invalid HTML.
    expect(html).toContain('<div><p>Hello <b>Alice</b>,</p>');
    expect(html).toContain('&amp; <i>that</i>.</p></div>');
    expect(html).not.toMatch(/<p>\s*<(p|ul|ol|div|blockquote|table)\b/);
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
    expect(html).toContain('<div><p>It <u>still</u> jams.</p></div>');
    expect(html).not.toMatch(/<p>\s*<(p|ul|ol|div|blockquote|table)\b/);
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

describe('migration 034', () => {
  const up = () => m034.up(sequelize().getQueryInterface());
  const down = () => m034.down(sequelize().getQueryInterface());

  it('writes the seed\'s new text over the old one: every shipped template with the message\'s text, in a <div>', () => {
    const withText = Object.entries(DEFAULT_EMAIL_TEMPLATES).filter(([, t]) => t.contents.includes('{{ message.text }}')).map(([name]) => name);
    expect(Object.keys(m034.NEW).sort()).toEqual(withText.sort());
    for (const name of withText) {
      expect([name, m034.NEW[name]]).toEqual([name, DEFAULT_EMAIL_TEMPLATES[name as keyof typeof DEFAULT_EMAIL_TEMPLATES].contents]);
      expect(m034.NEW[name]).toContain('<div>{{ message.text }}</div>');
      expect(m034.OLD[name]).toBe(m034.NEW[name].replace('<div>{{ message.text }}</div>', '<p>{{ message.text }}</p>'));
    }
  });

  it('updates templates still as shipped, and leaves edited ones (even of case only) and their subjects alone', async () => {
    const NAME = 'user_ticket_reply';
    const shipped = (await EmailTemplate.findOne({ where: { name: NAME, brand_id: null } }))!;
    const note = (await EmailTemplate.findOne({ where: { name: 'operator_ticket_note', brand_id: null } }))!;
    const brand = await Brand.create({ name: unique('Brand m034 '), enabled: 1 });
    const other = await Brand.create({ name: unique('Brand m034 '), enabled: 1 });
    // A brand's edited version, and another's differing from the old text in case only.
    const edited = await EmailTemplate.create({ name: NAME, brand_id: brand.id, subject: 'Re: mine', contents: `<p>Hello!</p>\n${m034.OLD[NAME]}` });
    const cased = await EmailTemplate.create({ name: NAME, brand_id: other.id, subject: 'Re: theirs', contents: m034.OLD[NAME].replace('<p>{{ message.text }}</p>', '<P>{{ message.text }}</P>') });
    const subject = shipped.subject;
    try {
      // As an install seeded before the fix has it (raw: the model's hooks would set updated_at).
      for (const t of [shipped, note]) {
        await sequelize().query('UPDATE email_templates SET contents = ?, updated_at = 1 WHERE id = ?', { replacements: [m034.OLD[t.name], t.id] });
      }
      await up();
      await Promise.all([shipped.reload(), note.reload(), edited.reload(), cased.reload()]);
      expect([shipped.contents, note.contents]).toEqual([m034.NEW[NAME], m034.NEW.operator_ticket_note]);
      expect(shipped.updated_at).toBeGreaterThan(1);
      expect(shipped.subject).toBe(subject);
      expect(edited.contents).toBe(`<p>Hello!</p>\n${m034.OLD[NAME]}`);
      expect(cased.contents).toContain('<P>{{ message.text }}</P>');

      // Down gives the old text back where the new one is unedited; up again.
      await down();
      await shipped.reload();
      expect(shipped.contents).toBe(m034.OLD[NAME]);
      await up();
      await shipped.reload();
      expect(shipped.contents).toBe(m034.NEW[NAME]);
    } finally {
      await shipped.update({ contents: m034.NEW[NAME] });
      await note.update({ contents: m034.NEW.operator_ticket_note });
      await EmailTemplate.destroy({ where: { id: [edited.id, cased.id] } });
      await Brand.destroy({ where: { id: [brand.id, other.id] } });
    }
  });
});
