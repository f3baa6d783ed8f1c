/**
 * MAIL_PRIORITISE_REPLY_TO (SupportPal's "Prioritise Reply-To", src/mailbox/replyTo.ts): a web
 * form's mail, From the site and Reply-To the visitor, opens the visitor's ticket and the
 * acknowledgement reaches the visitor at the SMTP server; the visitor's later reply is the ticket
 * user's; a Reply-To that is one of our addresses is not taken. Mails fed in as the mailbox worker
 * does; the default (off) is in ingest.test.ts.
 */
import './replyToEnv';
import { IncomingMail, Ticket, User } from '../../src/db/models';
import { ingestMail } from '../../src/mailbox/ingest';
import { newEmail, unique, useApi } from '../helpers/app';
import { mailTo, mailsOf, settled, useMailWorld } from '../notifications/support';
import { messagesOf, rawMail } from './support';
import { dropQueuedMail } from '../helpers/jobs';

afterAll(() => dropQueuedMail());
useApi();
const m = useMailWorld();
const ingest = (raw: Buffer) => ingestMail(raw, { departmentEmail: m.world.address, remoteUid: unique('uid') });

describe('Reply-To as the sender', () => {
  it('a web form\'s mail is the visitor\'s ticket, and the visitor gets its acknowledgement', async () => {
    const site = newEmail('wordpress');
    const visitor = newEmail('visitor');
    const first = await ingest(await rawMail({
      from: `Our Website <${site}>`, to: m.world.address.address, subject: unique('Contact form'),
      headers: { 'Reply-To': `Vera Visitor <${visitor}>` },
    }));
    expect(first.decision).toBe('new_ticket');
    expect(first.reason).toContain(`the sender is the Reply-To ${visitor} (MAIL_PRIORITISE_REPLY_TO; From: ${site})`);
    const ticket = (await Ticket.findByPk(first.ticketId!))!;
    const owner = (await User.findByPk(ticket.user_id))!;
    expect([owner.email, owner.firstname, owner.lastname]).toEqual([visitor, 'Vera', 'Visitor']);
    expect(ticket.cc ?? []).toEqual([]);
    // The ledger keeps the From as written.
    expect((await IncomingMail.findByPk(first.ledgerId!))!.from_address).toBe(site);

    const ack = await mailTo(m.smtp, ticket, visitor, 'the acknowledgement to the visitor');
    expect(ack.envelopeTo).toEqual([visitor]);
    await settled(ticket.id);
    expect(mailsOf(m.smtp, ticket).filter((mail) => mail.envelopeTo.includes(site))).toEqual([]);

    // The visitor answers from their own mailbox: the ticket user's reply, not a newcomer's.
    const reply = await ingest(await rawMail({
      from: visitor, to: m.world.address.address, subject: `Re: [#${ticket.number}] ${ticket.subject}`, inReplyTo: ack.parsed.messageId!,
    }));
    expect(reply).toMatchObject({ decision: 'reply', ticketId: ticket.id });
    const messages = await messagesOf(ticket.id);
    expect(messages.map((msg) => msg.user_id)).toEqual([owner.id, owner.id]);
    expect((await Ticket.findByPk(ticket.id))!.cc ?? []).toEqual([]);
  });

  it('keeps the From when the Reply-To is one of our own addresses, or the From itself', async () => {
    const sender = newEmail('sender');
    const ours = await ingest(await rawMail({
      from: sender, to: m.world.address.address, subject: unique('Ours'), headers: { 'Reply-To': m.world.address.address },
    }));
    expect(ours.decision).toBe('new_ticket');
    expect(ours.reason).not.toContain('Reply-To');
    expect((await User.findByPk((await Ticket.findByPk(ours.ticketId!))!.user_id))!.email).toBe(sender);

    const same = await ingest(await rawMail({
      from: sender, to: m.world.address.address, subject: unique('Same'), headers: { 'Reply-To': `Someone <${sender.toUpperCase()}>` },
    }));
    expect(same.reason).not.toContain('Reply-To');
    expect((await User.findByPk((await Ticket.findByPk(same.ticketId!))!.user_id))!.email).toBe(sender);
  });
});
