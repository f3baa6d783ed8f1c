/**
 * The mails a ticket's change through the API causes, beyond assignment: the user told that an
 * operator resolved the ticket (user_ticket_operatorclose; not when it is locked), and the operators of the
 * department a ticket moved to (operator_department_changed). Counted at the SMTP server.
 */
import { OperatorDepartment, Ticket } from '../../src/db/models';
import { newEmail, useApi } from '../helpers/app';
import {
  mailEntries, mailTo, mailsOf, openTicket, operator, otherDepartment, settled, useMailWorld,
} from './support';

const api = useApi();
const m = useMailWorld();

const ok = (res: { status: number; body: any }) => {
  expect([res.status, res.body.status]).toEqual([200, 'success']);
  return res.body.data;
};

/** A ticket opened without mail (the test counts only what its change sends). */
const quietTicket = async (o: Parameters<typeof openTicket>[1] = {}) => openTicket(m.world, { emitEvent: false, ...o });

describe('a ticket resolved through the API', () => {
  it('tells its user and CC addresses once (user_ticket_operatorclose); another status, or the same again, tells nobody', async () => {
    const cc = newEmail('cc');
    const { ticket, user } = await quietTicket({ cc: [cc] });
    ok(await api.put(`/api/ticket/ticket/${ticket.id}`, { status: m.world.autoCloseStatus }));
    ok(await api.put(`/api/ticket/ticket/${ticket.id}`, { status: m.world.resolvedStatus }));
    const mail = await mailTo(m.smtp, ticket, user.email, 'the user_ticket_operatorclose mail');
    expect(mail.envelopeTo.sort()).toEqual([user.email, cc].sort());
    expect(mail.parsed.subject).toBe(`[#${ticket.number}]: Your ticket has been resolved`);
    expect(mail.parsed.headers.get('auto-submitted')).toBe('auto-generated');
    // Resolved again with another field: no status change, no second mail.
    ok(await api.put(`/api/ticket/ticket/${ticket.id}`, { status: m.world.resolvedStatus, subject: 'Renamed' }));
    await settled(ticket.id);
    expect((await mailEntries(ticket.id)).map((e) => e.payload.kind)).toEqual(['user_ticket_operatorclose']);
    expect(mailsOf(m.smtp, ticket)).toHaveLength(1);
  });

  it('locking closes the ticket and tells nobody (the resolve mail asks for a reply a locked ticket refuses); nor do an internal ticket and an unmapped template', async () => {
    const locked = await quietTicket();
    expect(ok(await api.put(`/api/ticket/ticket/${locked.ticket.id}`, { locked: 1 }))).toMatchObject({ locked: 1, status_id: m.world.resolvedStatus });
    // The status as well in the same request: the same.
    const lockedResolved = await quietTicket();
    ok(await api.put(`/api/ticket/ticket/${lockedResolved.ticket.id}`, { locked: 1, status: m.world.resolvedStatus }));

    const internal = await quietTicket({ internal: true, author: m.world.direct });
    ok(await api.put(`/api/ticket/ticket/${internal.ticket.id}`, { status: m.world.resolvedStatus }));

    const templates = m.world.department.email_templates!;
    await m.world.department.update({ email_templates: JSON.stringify({ ...JSON.parse(templates), user_ticket_operatorclose: -1 }) });
    const unmapped = await quietTicket();
    try {
      ok(await api.put(`/api/ticket/ticket/${unmapped.ticket.id}`, { status: m.world.resolvedStatus }));
    } finally {
      await m.world.department.update({ email_templates: templates });
    }
    for (const quiet of [locked, lockedResolved, internal, unmapped]) {
      expect((await Ticket.findByPk(quiet.ticket.id))!.status_id).toBe(m.world.resolvedStatus);
      expect(await mailEntries(quiet.ticket.id)).toEqual([]);
    }
  });
});

describe('a ticket moved to another department through the API', () => {
  it('tells the active operators of the new department (operator_department_changed), not the old one\'s', async () => {
    const { department, member, inactive } = await otherDepartment(m.world);
    const { ticket, user } = await quietTicket();
    ok(await api.put(`/api/ticket/ticket/${ticket.id}`, { department: department.id }));
    const mail = await mailTo(m.smtp, ticket, member.email, 'the operator_department_changed mail');
    expect(mail.envelopeTo).toEqual([member.email]);
    expect(mail.parsed.subject).toBe(`[#${ticket.number}]: Ticket moved to ${department.name}`);
    expect(mail.parsed.text).toContain(`from ${user.firstname} ${user.lastname} was moved to ${department.name}`);
    await settled(ticket.id);
    // One mail: the old department's operators and the inactive member hear nothing, nor does the user.
    expect(mailsOf(m.smtp, ticket).map((sent) => sent.envelopeTo)).toEqual([[member.email]]);
    expect(mailsOf(m.smtp, ticket).flatMap((sent) => sent.envelopeTo)).not.toContain(inactive.email);
  });

  it('an operator assigned in the same request hears of the assignment only; an unmapped template tells nobody', async () => {
    const moved = await otherDepartment(m.world);
    const { ticket } = await quietTicket();
    const assignee = await operator();
    await OperatorDepartment.create({ user_id: assignee.id, department_id: moved.department.id });
    ok(await api.put(`/api/ticket/ticket/${ticket.id}`, { department: moved.department.id, assignedto: [assignee.id] }));
    await mailTo(m.smtp, ticket, moved.member.email);
    await settled(ticket.id);
    expect((await mailEntries(ticket.id)).map((e) => [e.payload.kind, e.payload.recipientId]).sort()).toEqual([
      ['operator_assigned', assignee.id], ['operator_department_changed', moved.member.id],
    ].sort());
    expect(mailsOf(m.smtp, ticket)).toHaveLength(2);

    const unmapped = await otherDepartment(m.world, { operator_department_changed: -1 });
    const other = await quietTicket();
    ok(await api.put(`/api/ticket/ticket/${other.ticket.id}`, { department: unmapped.department.id }));
    expect(await mailEntries(other.ticket.id)).toEqual([]);
  });
});
