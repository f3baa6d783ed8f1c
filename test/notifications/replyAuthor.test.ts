/**
 * The operators' mail about a user's reply names who wrote it (`{{ message.user.formatted_name }}`):
 * a CC'd user's reply once reached them as "New reply from <the ticket's user>". Installs keep the
 * templates they were seeded with: migration 033 updates the shipped text, never an edited one.
 */
import { Brand, EmailTemplate, Ticket, TicketMessage } from '../../src/db/models';
import { ingestMail } from '../../src/mailbox/ingest';
import { ticketMail } from '../../src/ticket/mail/job';
import { expectDeleted } from '../helpers/envelope';
import { rawMail } from '../mailbox/support';
import { sequelize } from '../../src/db/sequelize';
import { DEFAULT_EMAIL_TEMPLATES } from '../../src/seed/emailTemplates';
import * as m033 from '../../migrations/033_reply_author_template';
import * as m034 from '../../migrations/034_message_text_block';
import { newEmail, unique, useApi } from '../helpers/app';
import { waitFor } from '../helpers/smtp';
import { customer, mailsOf, mailTo, settled, useMailWorld } from './support';

const api = useApi();
const m = useMailWorld();

const ok = (res: { status: number; body: any }) => {
  expect([res.status, res.body.status]).toEqual([200, 'success']);
  return res.body.data;
};

describe('the operators\' mail about a user\'s reply', () => {
  it('names the reply\'s author: a CC\'d user, or the ticket\'s user', async () => {
    const owner = newEmail('owner');
    const copied = await customer(m.world.brand.id, { email: newEmail('cc'), firstname: 'Carl', lastname: 'Copy' });
    const created = ok(await api.post('/api/ticket/ticket', {
      brand: m.world.brand.id, department: m.world.department.id, status: m.world.openStatus, priority: m.world.priorityId,
      subject: 'Scanner', text: 'It scans nothing.', user_email: owner, user_firstname: 'Olga', user_lastname: 'Owner', cc: [copied.email],
      send_operators_email: 0,
    }));
    const ticket = (await Ticket.findByPk(created.id))!;
    await mailTo(m.smtp, ticket, owner, 'user_ticket_opened');
    await settled(ticket.id);

    const operatorMailAbout = (messageId: number) => waitFor(() => mailsOf(m.smtp, ticket).find((mail) => mail.envelopeTo.includes(m.world.direct.email)
      && mail.parsed.messageId?.startsWith(`<t${ticket.id}.m${messageId}.`)), 60000, `the operator's mail about message ${messageId}`);

    // The CC'd user replies.
    const theirs = ok(await api.post('/api/ticket/message', { ticket_id: ticket.id, user_id: copied.id, text: 'Mine too.', send_user_email: 0 }));
    const aboutTheirs = await operatorMailAbout(theirs.id);
    expect(aboutTheirs.parsed.subject).toBe(`[#${ticket.number}]: New reply from Carl Copy`);
    expect(aboutTheirs.parsed.text).toContain(`Carl Copy replied to ticket #${ticket.number} (Scanner):`);
    expect(aboutTheirs.parsed.text).not.toContain('Olga');

    // The ticket's user replies.
    const own = ok(await api.post('/api/ticket/message', { ticket_id: ticket.id, user_id: ticket.user_id, text: 'Any news?', send_user_email: 0 }));
    const aboutOwn = await operatorMailAbout(own.id);
    expect(aboutOwn.parsed.subject).toBe(`[#${ticket.number}]: New reply from Olga Owner`);
    expect(aboutOwn.parsed.text).toContain(`Olga Owner replied to ticket #${ticket.number} (Scanner):`);
    await settled(ticket.id);
  });
});

describe('a reply whose author was deleted', () => {
  it('names the address it was mailed from, else "Deleted user": never an empty name', async () => {
    const carl = await customer(m.world.brand.id, { email: newEmail('carl'), firstname: 'Carl', lastname: 'Copy' });
    const dana = newEmail('dana');
    const created = ok(await api.post('/api/ticket/ticket', {
      brand: m.world.brand.id, department: m.world.department.id, status: m.world.openStatus, priority: m.world.priorityId,
      subject: 'Fax', text: 'It faxes nothing.', user_email: newEmail('owner'), cc: [carl.email, dana], send_user_email: 0, send_operators_email: 0,
    }));
    const ticket = (await Ticket.findByPk(created.id))!;
    // Carl replies through the API; Dana by mail (the ledger keeps the address it came from).
    const byApi = ok(await api.post('/api/ticket/message', { ticket_id: ticket.id, user_id: carl.id, text: 'Mine too.', send_user_email: 0, send_operators_email: 0 }));
    const byMail = await ingestMail(await rawMail({ from: `Dana Doe <${dana}>`, to: m.world.address.address, subject: `Re: [#${ticket.number}] Fax`, text: 'And mine.' }), { departmentEmail: m.world.address, remoteUid: unique('uid') });
    expect(byMail.decision).toBe('reply');
    await settled(ticket.id);
    const danaUser = (await TicketMessage.findByPk(byMail.messageId!))!.user_id!;
    for (const id of [carl.id, danaUser]) expectDeleted(await api.del(`/api/user/user/${id}`), 'user');

    const sent = async (messageId: number) => {
      const result = await ticketMail.handle({ kind: 'operator_user_ticket_reply', ticketId: ticket.id, messageId, recipientId: m.world.direct.id }, undefined as never) as { messageId: string };
      return waitFor(() => m.smtp.received.find((mail) => mail.parsed.messageId === `<${result.messageId}>`), 60000, `the mail about message ${messageId}`);
    };
    const aboutApi = await sent(byApi.id);
    expect(aboutApi.parsed.subject).toBe(`[#${ticket.number}]: New reply from Deleted user`);
    expect(aboutApi.parsed.text).toContain(`Deleted user replied to ticket #${ticket.number} (Fax):`);
    const aboutMail = await sent(byMail.messageId!);
    expect(aboutMail.parsed.subject).toBe(`[#${ticket.number}]: New reply from ${dana}`);
    expect(aboutMail.parsed.text).toContain(`${dana} replied to ticket #${ticket.number} (Fax):`);
  });
});

describe('migration 033', () => {
  const NAME = 'operator_user_ticket_reply';
  const up = () => m033.up(sequelize().getQueryInterface());
  const down = () => m033.down(sequelize().getQueryInterface());
  const shipped = async () => (await EmailTemplate.findOne({ where: { name: NAME, brand_id: null } }))!;

  it('writes the seed\'s new text over the old one', () => {
    // The seed's contents as they were then: migration 034 has since put the message's text in a <div>.
    expect(m034.NEW[NAME]).toBe(DEFAULT_EMAIL_TEMPLATES[NAME].contents);
    expect(m033.NEW).toEqual({ subject: DEFAULT_EMAIL_TEMPLATES[NAME].subject, contents: m034.OLD[NAME] });
    expect(m033.OLD.subject).toBe(m033.NEW.subject.replace('message.user.formatted_name', 'user.formatted_name'));
    expect(m033.OLD.contents).toBe(m033.NEW.contents.replace('message.user.formatted_name', 'user.formatted_name'));
  });

  it('updates a template still as shipped, field by field, and leaves edits (even of case only) alone', async () => {
    const template = await shipped();
    const brand = await Brand.create({ name: unique('Brand m033 '), enabled: 1 });
    // A brand's own version: the shipped subject, contents of its own.
    const edited = await EmailTemplate.create({ name: NAME, brand_id: brand.id, subject: m033.OLD.subject, contents: '<p>{{ user.formatted_name }} wrote.</p>' });
    // Another brand's, differing from the old subject in case only.
    const other = await Brand.create({ name: unique('Brand m033 '), enabled: 1 });
    const cased = await EmailTemplate.create({ name: NAME, brand_id: other.id, subject: m033.OLD.subject.toLowerCase(), contents: m033.OLD.contents });
    try {
      // As an install seeded before the fix has it (raw: the model's hooks would set updated_at).
      await sequelize().query('UPDATE email_templates SET subject = ?, contents = ?, updated_at = 1 WHERE id = ?', { replacements: [m033.OLD.subject, m033.OLD.contents, template.id] });
      await up();
      await Promise.all([template.reload(), edited.reload(), cased.reload()]);
      expect({ subject: template.subject, contents: template.contents }).toEqual(m033.NEW);
      expect(template.updated_at).toBeGreaterThan(1);
      expect({ subject: edited.subject, contents: edited.contents }).toEqual({ subject: m033.NEW.subject, contents: '<p>{{ user.formatted_name }} wrote.</p>' });
      expect({ subject: cased.subject, contents: cased.contents }).toEqual({ subject: m033.OLD.subject.toLowerCase(), contents: m033.NEW.contents });

      // Down gives the old text back where the new one is unedited; up again.
      await down();
      await template.reload();
      expect({ subject: template.subject, contents: template.contents }).toEqual(m033.OLD);
      await up();
      await template.reload();
      expect({ subject: template.subject, contents: template.contents }).toEqual(m033.NEW);
    } finally {
      // As the seed ships it now (after migration 034).
      await template.update({ subject: DEFAULT_EMAIL_TEMPLATES[NAME].subject, contents: DEFAULT_EMAIL_TEMPLATES[NAME].contents });
      await EmailTemplate.destroy({ where: { id: [edited.id, cased.id] } });
      await Brand.destroy({ where: { id: [brand.id, other.id] } });
    }
  });
});
