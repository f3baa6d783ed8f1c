/**
 * Mail loops the headers alone did not stop: a mail of ours coming back (a forward relayed by a
 * list or an alias under a Message-ID of its own) carries our X-Loop marker and is refused as a
 * loop; two auto-responders that send no RFC 3834 headers, copied on one ticket, stop answering
 * each other at the flood limit (MAIL_FLOOD_LIMIT=3 here): their mails are still filed, but
 * nothing goes out because of them; a robot that opens a ticket with every answer is answered for
 * MAIL_FLOOD_NEW_TICKETS (3 here) tickets only. Real SMTP server, mails fed in as the mailbox worker does.
 */
import './floodEnv';
import { IncomingMail, Ticket, User } from '../../src/db/models';
import { ingestBatch, ingestMail } from '../../src/mailbox/ingest';
import { newEmail, unique, useApi } from '../helpers/app';
import type { ReceivedMail } from '../helpers/smtp';
import { addMessage, mailAbout, mailTo, mailsOf, openTicket, settled, useMailWorld } from '../notifications/support';
import { MESSAGE_TYPE } from '../../src/db/models/TicketMessage';
import { messagesOf, rawMail } from './support';
import { dropQueuedMail } from '../helpers/jobs';

afterAll(() => dropQueuedMail());
const api = useApi();
const m = useMailWorld();

const ok = (res: { status: number; body: any }) => {
  expect([res.status, res.body.status]).toEqual([200, 'success']);
  return res.body.data;
};
const ingest = (raw: Buffer) => ingestMail(raw, { departmentEmail: m.world.address, remoteUid: unique('uid') });

/** A mail we sent, as a list or an alias relays it back: the same mail under a Message-ID of its own. */
const relayed = (mail: ReceivedMail) => Buffer.from(mail.raw.toString('binary')
  .replace(/^Message-ID: .*\r\n/im, `Message-ID: <${unique('relay')}@list.test>\r\n`), 'binary');

async function apiTicket(cc: string[] = []): Promise<Ticket> {
  const created = ok(await api.post('/api/ticket/ticket', {
    brand: m.world.brand.id, department: m.world.department.id, status: m.world.openStatus, priority: m.world.priorityId,
    subject: 'Router down', text: 'No lights.', user_email: newEmail('owner'), cc, send_user_email: 0, send_operators_email: 0,
  }));
  return (await Ticket.findByPk(created.id))!;
}

describe('a mail of ours coming back', () => {
  it('a forward from the operator\'s own address carries the department\'s X-Loop, and comes back as a loop, not a reply', async () => {
    const ticket = await apiTicket();
    const vendor = newEmail('vendor-list');
    const forward = ok(await api.post('/api/ticket/forward', {
      ticket_id: ticket.id, user_id: m.world.grouped.id, text: 'Please check the uplink.', subject: 'Router down', from_address: 'me', to_address: [vendor],
    }));
    const sent = await mailAbout(m.smtp, ticket, forward.id, 'the forward');
    expect(sent.envelopeFrom).toBe(m.world.grouped.email);
    expect(sent.parsed.headers.get('x-loop')).toBe(m.world.address.address);
    // Written by a person: not automatic.
    expect(sent.parsed.headers.get('auto-submitted')).toBeUndefined();

    const before = (await messagesOf(ticket.id)).length;
    const back = await ingest(relayed(sent));
    expect(back).toMatchObject({ decision: 'loop', ticketId: null, messageId: null });
    expect(back.reason).toBe(`Loop detected - the mail carries our X-Loop: ${m.world.address.address}.`);
    expect((await IncomingMail.findByPk(back.ledgerId!))!.decision).toBe('loop');
    expect(await messagesOf(ticket.id)).toHaveLength(before);
    await settled(ticket.id);
    expect(mailsOf(m.smtp, ticket)).toHaveLength(1);
  });

  it('a ticket without a department address mails from the brand\'s address, marked with it, and that comes back as a loop too', async () => {
    const { ticket } = await openTicket(m.world, { sendUserEmail: false, sendOperatorsEmail: false, values: { department_email_id: null } });
    const to = newEmail('alias');
    const forward = await addMessage(ticket, m.world.grouped, {
      type: MESSAGE_TYPE.FORWARD, extra: { to_address: [to], cc_address: null, bcc_address: null, subject: 'FYI', from_address: null },
    });
    const sent = await mailAbout(m.smtp, ticket, forward.id, 'the forward');
    expect(sent.envelopeFrom).toBe(m.world.brand.default_email);
    expect(sent.parsed.headers.get('x-loop')).toBe(m.world.brand.default_email);
    // Sent back to the department by the alias, with our marker in angle brackets and a list's own X-Loop beside it.
    const raw = Buffer.from(relayed(sent).toString('binary')
      .replace(/^X-Loop: .*\r\n/im, `X-Loop: list@lists.test\r\nX-Loop: Acme <${m.world.brand.default_email!.toUpperCase()}>\r\nDelivered-To: ${m.world.address.address}\r\n`), 'binary');
    const before = (await messagesOf(ticket.id)).length;
    const back = await ingest(raw);
    expect(back.decision).toBe('loop');
    expect(back.reason).toBe(`Loop detected - the mail carries our X-Loop: ${m.world.brand.default_email}.`);
    expect(await messagesOf(ticket.id)).toHaveLength(before);
  });
});

describe('two auto-responders copied on one ticket', () => {
  it('answer each other only up to MAIL_FLOOD_LIMIT (3): later mails are filed but mail nobody', async () => {
    const [alpha, beta] = [newEmail('alpha-bot'), newEmail('beta-bot')];
    const ticket = await apiTicket([alpha, beta]);
    await settled(ticket.id);
    // Each auto-responder answers the copy it got, with no RFC 3834 header: alpha five times, beta once.
    const results = [];
    for (let i = 1; i <= 5; i++) results.push(await ingest(await rawMail({ from: alpha, to: m.world.address.address, subject: `Re: [#${ticket.number}] Router down`, text: `Thanks for your mail (${i}).` })));
    expect(results.map((r) => r.decision)).toEqual(['reply', 'reply', 'reply', 'reply', 'reply']);
    expect(results.map((r) => r.reason!.includes('flood protection'))).toEqual([false, false, false, true, true]);
    expect(results[3].reason).toContain(`flood protection: mail 4 from ${alpha} into the ticket within 600 s, over MAIL_FLOOD_LIMIT (3): nobody notified`);
    // Nothing is lost: every mail is in the ticket.
    expect((await messagesOf(ticket.id)).map((msg) => msg.text).slice(1)).toEqual([1, 2, 3, 4, 5].map((i) => `Thanks for your mail (${i}).`));
    // Another sender has a limit of its own.
    const fromBeta = await ingest(await rawMail({ from: beta, to: m.world.address.address, subject: `Re: [#${ticket.number}] Router down`, text: 'Got it.' }));
    expect(fromBeta.reason).not.toContain('flood protection');

    // beta (and the ticket's user, whom no bot's mail was sent to) got a copy of alpha's first three
    // mails only, the operators a notice of them; alpha and the ticket's user got beta's.
    await mailTo(m.smtp, ticket, alpha, 'the copy of beta\'s mail');
    await settled(ticket.id);
    const owner = (await User.findByPk(ticket.user_id))!.email;
    const about = (messageId: number | null) => mailsOf(m.smtp, ticket).filter((mail) => mail.parsed.messageId?.startsWith(`<t${ticket.id}.m${messageId}.`));
    expect(results.map((r) => about(r.messageId).filter((mail) => mail.envelopeTo.includes(beta)).length)).toEqual([1, 1, 1, 0, 0]);
    expect(results.map((r) => about(r.messageId).filter((mail) => mail.envelopeTo.includes(owner)).length)).toEqual([1, 1, 1, 0, 0]);
    expect(results.map((r) => about(r.messageId).length)).toEqual([3, 3, 3, 0, 0]);
    expect(about(fromBeta.messageId).map((mail) => mail.envelopeTo).flat().sort()).toEqual([alpha, owner, m.world.direct.email, m.world.grouped.email].sort());
  });

  it('in one batch, the mail that opened the ticket counts toward its sender\'s limit: the fourth mail is quiet', async () => {
    const gamma = newEmail('gamma-bot');
    const opening = `<${unique('open')}@gamma.test>`;
    const raws = [await rawMail({ from: gamma, to: m.world.address.address, subject: `Status report ${unique('s')}`, messageId: opening, text: 'Report 1.' })];
    for (let i = 2; i <= 5; i++) raws.push(await rawMail({ from: gamma, to: m.world.address.address, subject: 'Re: Status report', inReplyTo: opening, references: [opening], text: `Report ${i}.` }));
    const results = await ingestBatch(raws.map((raw) => ({ raw, remoteUid: unique('uid'), advance: async () => {} })), m.world.address);
    expect(results.map((r) => r.decision)).toEqual(['new_ticket', 'reply', 'reply', 'reply', 'reply']);
    // One batch (one transaction): the replies found the ticket the first mail opened.
    expect(new Set(results.map((r) => r.ticketId)).size).toBe(1);
    expect(results.map((r) => (r.reason ?? '').includes('flood protection'))).toEqual([false, false, false, true, true]);
    expect(results[3].reason).toContain(`flood protection: mail 4 from ${gamma} into the ticket within 600 s`);
    expect((await messagesOf(results[0].ticketId!)).map((msg) => msg.text)).toEqual([1, 2, 3, 4, 5].map((i) => `Report ${i}.`));
  });
});

describe('a robot that opens a new ticket with every answer it gets', () => {
  it('gets answers for MAIL_FLOOD_NEW_TICKETS (3) tickets in the window; later mails still open tickets, but it is answered no more', async () => {
    const robot = newEmail('robot');
    const results = [];
    for (let i = 1; i <= 5; i++) {
      results.push(await ingest(await rawMail({ from: robot, to: m.world.address.address, subject: `Automatic notice ${unique('n')}`, text: `Notice ${i}.` })));
    }
    // Nothing is lost: five tickets.
    expect(results.map((r) => r.decision)).toEqual(['new_ticket', 'new_ticket', 'new_ticket', 'new_ticket', 'new_ticket']);
    expect(new Set(results.map((r) => r.ticketId)).size).toBe(5);
    expect(results.map((r) => (r.reason ?? '').includes('flood protection'))).toEqual([false, false, false, true, true]);
    expect(results[3].reason).toContain(`flood protection: ticket 4 opened by ${robot} within 600 s, over MAIL_FLOOD_NEW_TICKETS (3): the sender is not answered`);
    const tickets = await Promise.all(results.map(async (r) => (await Ticket.findByPk(r.ticketId!))!));
    for (const ticket of tickets) await settled(ticket.id);
    // What reached the SMTP server: three acknowledgements to the robot; the operators heard of all five.
    expect(m.smtp.mailsTo(robot)).toHaveLength(3);
    for (const ticket of tickets) expect(mailsOf(m.smtp, ticket).filter((mail) => mail.envelopeTo.includes(m.world.direct.email))).toHaveLength(1);
  });

  it('in one batch, the tickets opened before count: the fourth of a batch is not answered', async () => {
    const robot = newEmail('batch-robot');
    const raws = await Promise.all([1, 2, 3, 4].map((i) => rawMail({ from: robot, to: m.world.address.address, subject: `Alert ${unique('a')}`, text: `Alert ${i}.` })));
    const results = await ingestBatch(raws.map((raw) => ({ raw, remoteUid: unique('uid'), advance: async () => {} })), m.world.address);
    expect(results.map((r) => r.decision)).toEqual(['new_ticket', 'new_ticket', 'new_ticket', 'new_ticket']);
    expect(results.map((r) => (r.reason ?? '').includes('flood protection'))).toEqual([false, false, false, true]);
    // Another sender has a limit of its own.
    expect((await ingest(await rawMail({ from: newEmail('person'), to: m.world.address.address }))).reason ?? '').not.toContain('flood protection');
  });
});
