/**
 * What the delivery record (`GET /api/core/mail`) says of a mail the SMTP server refused, in whole
 * or for some recipients, against a real SMTP server that refuses as told (test/helpers/smtp.ts).
 */
import { DomainEvent } from '../../src/db/models';
import { jobIdOf } from '../../src/queue/outbox';
import { useApi, newEmail } from '../helpers/app';
import { expectSuccess } from '../helpers/envelope';
import { mailQueue } from '../helpers/jobs';
import { waitForProgress } from '../helpers/smtp';
import { mailEntries, openTicket, useMailWorld } from '../notifications/support';

const api = useApi();
/**
 * The server answers by the recipients' local parts: `refused…` 550 and `deferred…` 450 at RCPT TO;
 * a message to `toobig…` 552, to `spam…` 554 and to `busy…` 451 at the end of DATA.
 */
const m = useMailWorld({
  rcpt: (address) => (address.startsWith('refused') ? { code: 550, message: `5.1.1 <${address}>: Recipient address rejected: User unknown` }
    : address.startsWith('deferred') ? { code: 450, message: `4.2.1 <${address}>: Mailbox busy, try again later` } : null),
  data: (recipients) => {
    const to = (prefix: string) => recipients.some((r) => r.startsWith(prefix));
    if (to('toobig')) return { code: 552, message: '5.3.4 Message size exceeds fixed limit' };
    if (to('spam')) return { code: 554, message: '5.7.1 Message rejected as spam' };
    if (to('busy')) return { code: 451, message: '4.3.0 Temporary local problem, try again later' };
    return null;
  },
});
let jobs: ReturnType<typeof mailQueue>;
beforeAll(() => { jobs = mailQueue(); });
afterAll(() => jobs.close());

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
  return { ticket, record, job: (await jobs.job(jobIdOf(entry)))! };
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

describe('a mail the SMTP server refuses', () => {
  it('for good (5xx: 552 or 554 at the end of DATA, 550 for its only recipient) fails at once: one attempt, the reason, mail.failed', async () => {
    const cases: Array<[string, RegExp]> = [
      ['toobig', /^Message failed: 552 5\.3\.4 Message size exceeds fixed limit$/],
      ['spam', /^Message failed: 554 5\.7\.1 Message rejected as spam$/],
      ['refused', /^Can't send mail - all recipients were rejected: 550 5\.1\.1 .*: refused.* \(550 5\.1\.1 .*User unknown\)$/],
    ];
    for (const [prefix, reason] of cases) {
      const to = newEmail(prefix);
      const { record, job } = await forward([to]);
      expect(record).toMatchObject({ status: 'failed', recipients: to, attempts: 1, error: expect.stringMatching(reason), sent_at: null });
      expect(record.failed_at).toBeGreaterThanOrEqual(record.queued_at);
      expect(await eventsOf(record.id)).toEqual(['mail.failed']);
      // Not retried: BullMQ took the job as failed after its first attempt.
      await waitForProgress(async () => job.getState(), (state) => state === 'failed', 'the job to be failed');
      expect((await jobs.job(job.id!))!.attemptsMade).toBe(1);
      expect(m.smtp.mailsTo(to)).toEqual([]);
    }
  });

  it('for now (4xx at the end of DATA or for every recipient, even beside a 550) is tried again, until its attempts run out', async () => {
    for (const to of [[newEmail('busy')], [newEmail('deferred')], [newEmail('refused'), newEmail('deferred')]]) {
      const { record, job } = await forward(to);
      // MAIL_ATTEMPTS is 3 in the tests (test/helpers/env.ts).
      expect(record).toMatchObject({ status: 'failed', attempts: 3, error: expect.stringMatching(/: 45[01] 4\./) });
      await waitForProgress(async () => job.getState(), (state) => state === 'failed', 'the job to be failed');
      expect((await jobs.job(job.id!))!.attemptsMade).toBe(3);
      expect(await eventsOf(record.id)).toEqual(['mail.failed']);
    }
  });
});
