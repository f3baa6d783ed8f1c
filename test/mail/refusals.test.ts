/**
 * What the delivery record (`GET /api/core/mail`) says of a mail the SMTP server refused, in whole
 * or for some recipients, against a real SMTP server that refuses as told (test/helpers/smtp.ts).
 */
import { DomainEvent } from '../../src/db/models';
import { useApi, newEmail } from '../helpers/app';
import { expectSuccess } from '../helpers/envelope';
import { waitForProgress } from '../helpers/smtp';
import { mailEntries, openTicket, useMailWorld } from '../notifications/support';

const api = useApi();
/** Recipients whose local part starts `refused` are refused at RCPT TO with a 550. */
const m = useMailWorld({
  rcpt: (address) => (address.startsWith('refused') ? { code: 550, message: `5.1.1 <${address}>: Recipient address rejected: User unknown` } : null),
});

/** The events of a delivery, by name. */
const eventsOf = async (outboxId: number) => (await DomainEvent.findAll({ where: { name: ['mail.delivered', 'mail.failed', 'mail.recipients_refused'] }, order: [['id', 'ASC']] }))
  .filter((e) => JSON.parse(e.payload).outboxId === outboxId).map((e) => e.name);

/** A forward through the API; its delivery record once the mail job is done with it. */
async function forward(to: string[], cc: string[] = [], bcc: string[] = []) {
  const { ticket } = await openTicket(m.world, { sendUserEmail: false, sendOperatorsEmail: false });
  expectSuccess(await api.post('/api/ticket/forward', {
    ticket_id: ticket.id, user_id: m.world.direct.id, text: 'Please have a look.', subject: 'Fwd', to_address: to, cc_address: cc, bcc_address: bcc,
  }), 'Successfully created new message!');
  const [{ entry }] = await mailEntries(ticket.id);
  const record = await waitForProgress(async () => expectSuccess(await api.get(`/api/core/mail/${entry.id}`)),
    (d) => d.status !== 'queued', 'the forward to be sent or to fail');
  return { ticket, record };
}

describe('the delivery record of a mail', () => {
  it('lists every recipient of its envelope: To, Cc and Bcc', async () => {
    const [to, cc, bcc] = [newEmail('vendor'), newEmail('boss'), newEmail('audit')];
    const { record } = await forward([to], [cc], [bcc]);
    expect(record).toMatchObject({ status: 'sent', recipients: `${to}, ${cc}, ${bcc}`, error: null });
    expect(m.smtp.mailsTo(bcc)).toHaveLength(1);
  });

  it('taken for some recipients and refused for others: sent, with the refused ones and why, and mail.recipients_refused', async () => {
    const [to, refused1, refused2] = [newEmail('vendor'), newEmail('refused1'), newEmail('refused2')];
    const { record } = await forward([to, refused1], [refused2]);
    expect(record).toMatchObject({
      status: 'sent', recipients: `${to}, ${refused1}, ${refused2}`, smtp_response: expect.stringMatching(/^250 /), attempts: 1,
      error: `The SMTP server refused 2 of 3 recipients: ${refused1} (550 5.1.1 <${refused1}>: Recipient address rejected: User unknown); `
        + `${refused2} (550 5.1.1 <${refused2}>: Recipient address rejected: User unknown)`,
    });
    expect(m.smtp.mailsTo(to)[0].envelopeTo).toEqual([to]);
    expect(await eventsOf(record.id)).toEqual(['mail.delivered', 'mail.recipients_refused']);
  });

  it('of many recipients keeps them within its column, cut between two addresses', async () => {
    const to = Array.from({ length: 60 }, (_, i) => newEmail(`many${i}`));
    const { record } = await forward(to);
    expect(record.status).toBe('sent');
    expect(record.recipients.length).toBeLessThanOrEqual(1024);
    const [, listed, more] = /^(.*) and (\d+) more$/.exec(record.recipients)!;
    expect(listed.split(', ')).toEqual(to.slice(0, to.length - Number(more)));
    expect(await eventsOf(record.id)).toEqual(['mail.delivered']);
  });
});
