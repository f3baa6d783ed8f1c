/**
 * `organisation_notifications`: a manager (or the owner) of an organisation who asked for it gets
 * the user-facing mails about their colleagues' tickets as a copy (Cc), like a CC address; counted
 * at the SMTP server.
 */
import { Organisation, type Ticket, type User } from '../../src/db/models';
import { MANAGER, MEMBER } from '../../src/user/organisationMembership';
import { useApi, unique } from '../helpers/app';
import type { ReceivedMail } from '../helpers/smtp';
import { addMessage, customer, mailTo, mailsOf, openTicket, settled, useMailWorld } from './support';

useApi();
const m = useMailWorld();

const addresses = (field: ReceivedMail['parsed']['to']) => (field && 'value' in field ? field.value.map((a) => a.address) : []);
/** Every copy of the ticket's mails that reached `address`, by the mail's subject. */
const reached = (ticket: Ticket, address: string) => mailsOf(m.smtp, ticket).filter((mail) => mail.envelopeTo.includes(address));
/** The mails about a message that reached no operator (the customer side's). */
const customerMails = (ticket: Ticket, messageId: number) => mailsOf(m.smtp, ticket).filter((mail) =>
  mail.parsed.messageId?.startsWith(`<t${ticket.id}.m${messageId}.`) && !mail.envelopeTo.some((a) => [m.world.direct.email, m.world.grouped.email].includes(a)));

/** An organisation of the world's brand with a notified manager, a manager who asked for none, and a plain member (who asked for them). */
async function organisation() {
  const org = await Organisation.create({ brand_id: m.world.brand.id, name: unique('Org') });
  const member = (level: number, values: Partial<User> = {}) =>
    customer(m.world.brand.id, { organisation_id: org.id, organisation_access_level: level, organisation_notifications: 1, ...values });
  const [manager, quietManager, plain, colleague] = await Promise.all([
    member(MANAGER, { firstname: 'Manny' }), member(MANAGER, { organisation_notifications: 0 }), member(MEMBER), member(MEMBER),
  ]);
  return { org, manager, quietManager, plain, colleague };
}

describe('a manager with organisation_notifications', () => {
  it('gets the acknowledgement and the operator reply of a colleague\'s ticket as a copy; a manager without the flag, a plain member and another organisation\'s manager do not', async () => {
    const { manager, quietManager, plain, colleague } = await organisation();
    const other = await organisation();
    const { ticket } = await openTicket(m.world, { user: colleague });

    const opened = await mailTo(m.smtp, ticket, colleague.email, 'the acknowledgement');
    expect(addresses(opened.parsed.to)).toEqual([colleague.email]);
    expect(addresses(opened.parsed.cc)).toEqual([manager.email]);
    expect(opened.envelopeTo.sort()).toEqual([colleague.email, manager.email].sort());
    // Written to the ticket's user, as the CC addresses' copy is.
    expect(opened.parsed.text).toContain(`Dear ${colleague.firstname} ${colleague.lastname},`);

    const reply = await addMessage(ticket, m.world.direct);
    await settled(ticket.id);
    const [replied, ...more] = customerMails(ticket, reply.id);
    expect(more).toEqual([]);
    expect(replied.parsed.text).toContain(reply.text);
    expect(addresses(replied.parsed.to)).toEqual([colleague.email]);
    expect(addresses(replied.parsed.cc)).toEqual([manager.email]);

    // Exactly these two mails reached the manager; none reached the others.
    expect(reached(ticket, manager.email)).toHaveLength(2);
    for (const person of [quietManager, plain, other.manager, other.quietManager]) expect([person.email, reached(ticket, person.email)]).toEqual([person.email, []]);
  });

  it('the owner who asked for it is copied whatever their level; an inactive manager is not', async () => {
    const { org, manager, colleague } = await organisation();
    const owner = await customer(m.world.brand.id, { organisation_id: org.id, organisation_access_level: MEMBER, organisation_notifications: 1 });
    await org.update({ owner_id: owner.id });
    await manager.update({ active: 0 });
    const { ticket } = await openTicket(m.world, { user: colleague });
    const opened = await mailTo(m.smtp, ticket, colleague.email);
    expect(addresses(opened.parsed.cc)).toEqual([owner.email]);
    await settled(ticket.id);
    expect(reached(ticket, manager.email)).toEqual([]);
  });

  it('gets a colleague\'s reply (no CC list needed), never a copy of their own reply, which the ticket\'s user gets', async () => {
    const { manager, colleague } = await organisation();
    const second = await customer(m.world.brand.id, { organisation_id: colleague.organisation_id, organisation_access_level: MANAGER });
    const { ticket } = await openTicket(m.world, { user: colleague, sendUserEmail: false });

    const theirs = await addMessage(ticket, colleague);
    await settled(ticket.id);
    expect(customerMails(ticket, theirs.id).map((mail) => mail.envelopeTo.sort())).toEqual([[manager.email, second.email].sort()]);

    // The manager answers their colleague's ticket: the colleague (To) and the other manager are copied, the author not.
    const own = await addMessage(ticket, manager);
    await settled(ticket.id);
    expect(customerMails(ticket, own.id).map((mail) => mail.envelopeTo.sort())).toEqual([[colleague.email, second.email].sort()]);
    expect(customerMails(ticket, own.id).map((mail) => addresses(mail.parsed.to))).toEqual([[colleague.email]]);
    expect(reached(ticket, manager.email)).toHaveLength(1);
    expect(reached(ticket, colleague.email)).toHaveLength(1);
  });

  it('of their own ticket, or also on the CC list, gets each mail once; send_user_email 0 copies nobody', async () => {
    const { manager, colleague } = await organisation();
    const own = await openTicket(m.world, { user: manager, cc: [manager.email.toUpperCase()] });
    const mine = await mailTo(m.smtp, own.ticket, manager.email);
    await settled(own.ticket.id);
    expect(addresses(mine.parsed.to)).toEqual([manager.email]);
    expect(addresses(mine.parsed.cc)).toEqual([]);
    expect(reached(own.ticket, manager.email)).toHaveLength(1);

    const copied = await openTicket(m.world, { user: colleague, cc: [manager.email] });
    const both = await mailTo(m.smtp, copied.ticket, colleague.email);
    await settled(copied.ticket.id);
    expect(addresses(both.parsed.cc)).toEqual([manager.email]);
    expect(reached(copied.ticket, manager.email)).toHaveLength(1);

    const quiet = await openTicket(m.world, { user: colleague, sendUserEmail: false });
    await addMessage(quiet.ticket, m.world.direct, { sendUserEmail: false });
    await settled(quiet.ticket.id);
    expect(reached(quiet.ticket, manager.email)).toEqual([]);
    expect(reached(quiet.ticket, colleague.email)).toEqual([]);
  });
});
