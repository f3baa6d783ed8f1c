/**
 * What the mail job decides when it sends: news about a ticket that is no longer true by then
 * goes out to nobody. The mail worker starts only after the changes (no worker runs in this file
 * before), so each mail is decided on the ticket as it is at sending time.
 */
import { now } from '../../src/db/entity';
import { closeTransports } from '../../src/mail/transports';
import { createWorker } from '../../src/queue/runWorker';
import { remindWaitingUsers } from '../../src/ticket/waitingReminders';
import { mailSpec } from '../../src/wiring';
import { useApi } from '../helpers/app';
import { startSmtp, type TestSmtp } from '../helpers/smtp';
import { mailEntries, mailWorld, mailsOf, openTicket, otherDepartment, settled, ticketSetting, type MailWorld } from './support';

const api = useApi();
let smtp: TestSmtp;
let world: MailWorld;

beforeAll(async () => {
  smtp = await startSmtp();
  world = await mailWorld(smtp.port);
});
afterAll(async () => {
  closeTransports();
  await smtp.close();
});

const ok = (res: { status: number; body: any }) => {
  expect([res.status, res.body.status]).toEqual([200, 'success']);
  return res.body.data;
};

it('a ticket reopened, locked, moved on again or answered before its mail was sent sends nothing stale', async () => {
  const reopened = await openTicket(world, { emitEvent: false });
  // Resolved, then locked: the resolve mail's "reply to reopen" no longer holds (a locked ticket refuses replies).
  const locked = await openTicket(world, { emitEvent: false });
  ok(await api.put(`/api/ticket/ticket/${locked.ticket.id}`, { status: world.resolvedStatus }));
  ok(await api.put(`/api/ticket/ticket/${locked.ticket.id}`, { locked: 1 }));
  const movedOn = await openTicket(world, { emitEvent: false });
  const first = await otherDepartment(world);
  ok(await api.put(`/api/ticket/ticket/${reopened.ticket.id}`, { status: world.resolvedStatus }));
  ok(await api.put(`/api/ticket/ticket/${reopened.ticket.id}`, { status: world.openStatus }));
  ok(await api.put(`/api/ticket/ticket/${movedOn.ticket.id}`, { department: first.department.id }));
  ok(await api.put(`/api/ticket/ticket/${movedOn.ticket.id}`, { department: world.department.id }));
  // Reminded, then the user replied (the reply itself mailed nobody: it was written by hand).
  const wait = Number(await ticketSetting('waiting_response_time'));
  const answered = await openTicket(world, { emitEvent: false, values: { status_id: world.autoCloseStatus, last_reply_time: now() - wait - 60 } });
  expect(await remindWaitingUsers()).toBeGreaterThanOrEqual(1);
  await answered.ticket.update({ last_reply_time: now() });
  expect((await mailEntries(answered.ticket.id)).map((e) => e.payload.kind)).toEqual(['user_ticket_waitingresponse']);

  const worker = await createWorker(mailSpec());
  try {
    for (const { ticket } of [reopened, locked, movedOn, answered]) await settled(ticket.id);
  } finally {
    await worker.close();
  }
  for (const { ticket } of [reopened, locked]) {
    expect((await mailEntries(ticket.id)).map((e) => e.payload.kind)).toEqual(['user_ticket_operatorclose']);
    expect(mailsOf(smtp, ticket)).toEqual([]);
  }
  expect(mailsOf(smtp, answered.ticket)).toEqual([]);
  // Moved back: the first department's operator is not told; the world's operators are (it moved to theirs).
  const told = mailsOf(smtp, movedOn.ticket).flatMap((sent) => sent.envelopeTo);
  expect(told.sort()).toEqual([world.direct.email, world.grouped.email].sort());
  expect(told).not.toContain(first.member.email);
});
