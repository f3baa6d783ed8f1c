import { unique, type TestApi } from './app';
import type { TestSmtp } from './smtp';
import { customer, type MailWorld } from '../notifications/support';

/**
 * Runs `failover` while `write` runs again and again: every record written goes to `written`,
 * and those written while the failover was under way to `during` too. The writer stops whatever
 * the failover does (a failover that never comes fails the test, and must not leave the writer
 * running); once the failover is over, the last write is awaited.
 */
export async function writeThroughFailover<T, R>(failover: () => Promise<R>, write: () => Promise<T>, written: T[]): Promise<R & { during: T[] }> {
  let failingOver = true;
  const during: T[] = [];
  const writer = (async () => {
    while (failingOver) {
      const record = await write();
      written.push(record);
      if (failingOver) during.push(record);
    }
  })();
  const result = await failover().finally(() => { failingOver = false; });
  await writer;
  return { ...result, during };
}

/** A ticket written through the API, the recipients its mails must reach, and how long its create took. */
export interface MailingTicket { id: number; number: string; expected: string[]; ms: number }

/**
 * Writes a ticket of a new customer of the world's department, mailing the customer and the two
 * active operators (the failover tests' unit of work).
 */
export async function writeMailingTicket(api: TestApi, world: MailWorld, subject: string): Promise<MailingTicket> {
  const user = await customer(world.brand.id);
  const started = Date.now();
  const res = await api.post('/api/ticket/ticket', {
    brand: world.brand.id, department: world.department.id, status: world.openStatus, priority: world.priorityId, user: user.id,
    subject: unique(subject), text: 'Written while Redis fails over.', send_user_email: 1, send_operators_email: 1,
  });
  expect({ status: res.status, message: res.body.message }).toEqual({ status: 200, message: 'Successfully created new ticket!' });
  return { id: res.body.data.id, number: res.body.data.number, expected: [user.email, world.direct.email, world.grouped.email].sort(), ms: Date.now() - started };
}

/** The recipients of every mail the SMTP server received about the ticket numbered `number`, sorted. */
export const recipientsOf = (smtp: TestSmtp, number: string): string[] =>
  smtp.received.filter((m) => m.parsed.headers.get('x-helpdesk-ticket') === number).flatMap((m) => m.envelopeTo).sort();
