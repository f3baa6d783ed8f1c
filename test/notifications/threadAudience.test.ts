/**
 * Whose conversation each stored Message-ID is (migration 036, src/ticket/mail/threading.ts): the
 * rows stored before it get their audience from their ticket message where it tells (forwards and
 * their answers, mails received from an operator or a user), and the mails sent from their
 * delivery's outbox entry (the job's kind and recipient); a row neither tells stays NULL and joins
 * every conversation's thread, as before. A thread is one statement on the thread index; the
 * mail another answers directly tells a forward's answer (also once the forward's message is
 * deleted) and an answer to a note.
 */
import { QueryTypes } from 'sequelize';
import { capture } from '../../bench/capture';
import * as m036 from '../../migrations/036_mail_thread_audience';
import { MailDelivery, OutboxEntry, Ticket, TicketMessage } from '../../src/db/models';
import { BY, MESSAGE_TYPE } from '../../src/db/models/TicketMessage';
import { sequelize } from '../../src/db/sequelize';
import { answeredMail, operatorAudience, threadOf } from '../../src/ticket/mail/threading';
import { unique, useApi } from '../helpers/app';
import { ticketContext, ticketFactories, type TicketContext } from '../ticket/ticketSupport';

const api = useApi();
let ctx: TicketContext;
const f = ticketFactories(api, () => ctx);
beforeAll(async () => {
  ctx = await ticketContext();
});

const query = <T extends object>(sql: string, replacements?: unknown[] | Record<string, unknown>): Promise<T[]> =>
  sequelize().query<T>(sql, { replacements, type: QueryTypes.SELECT });

describe('migration 036', () => {
  it('gives the rows stored before it their audience where their message or their delivery tells it, and NULL rows join every thread', async () => {
    const ticket = (await Ticket.findByPk((await f.ticket()).id))!;
    const [agent, vendor] = [await f.operator(), await f.user()];
    const [first] = await TicketMessage.findAll({ where: { ticket_id: ticket.id }, order: [['id', 'ASC']] });
    const message = (by: number, type: number, userId: number) => TicketMessage.create({
      ticket_id: ticket.id, channel_id: ticket.channel_id, user_id: userId, by, type, text: unique('text'), created_at: 1, updated_at: 1,
    });
    const reply = await message(BY.OPERATOR, MESSAGE_TYPE.MESSAGE, agent.id);
    const note = await message(BY.OPERATOR, MESSAGE_TYPE.NOTE, agent.id);
    const forward = await message(BY.OPERATOR, MESSAGE_TYPE.FORWARD, agent.id);
    const answer = await message(BY.USER, MESSAGE_TYPE.NOTE, vendor.id);

    await m036.down(sequelize().getQueryInterface());
    // Stored as before: in this order, with no audience.
    const rows: Array<[string, 'in' | 'out', number | null]> = [
      ['user-in', 'in', first.id], ['acknowledgement', 'out', first.id], ['operator-in', 'in', reply.id], ['reply-out', 'out', reply.id],
      ['note-out', 'out', note.id], ['forward-out', 'out', forward.id], ['answer-in', 'in', answer.id], ['assigned-out', 'out', null],
    ];
    const idOf = (name: string) => `${name}.${ticket.id}@legacy.test`;
    for (const [name, direction, messageId] of rows) {
      await query('INSERT INTO mail_message_ids (message_id, ticket_id, ticket_message_id, direction, created_at) VALUES (?, ?, ?, ?, 1)', [idOf(name), ticket.id, messageId, direction]);
    }
    // The deliveries of three of the mails sent (the mail worker's record: the job's outbox entry, the Message-ID sent).
    const delivered = async (name: string, payload: Record<string, unknown>) => {
      const entry = await OutboxEntry.create({ queue: 'mail', name: 'ticket.mail', payload: JSON.stringify({ ticketId: ticket.id, ...payload }), job_key: unique('k').slice(0, 16), created_at: 1, processed_at: 1 });
      await MailDelivery.create({ outbox_id: entry.id, status: 'sent', message_id: `<${idOf(name)}>`, attempts: 1, sent_at: 1 });
    };
    await delivered('acknowledgement', { kind: 'user_ticket_opened', messageId: first.id });
    await delivered('reply-out', { kind: 'user_ticket_reply', messageId: reply.id });
    await delivered('note-out', { kind: 'operator_ticket_note', messageId: note.id, recipientId: agent.id });
    await m036.up(sequelize().getQueryInterface());

    const stored = await query<{ message_id: string; audience: string | null }>('SELECT message_id, audience FROM mail_message_ids WHERE ticket_id = ? ORDER BY id', [ticket.id]);
    expect(stored.map((r) => [r.message_id, r.audience])).toEqual([
      [idOf('user-in'), 'user'], [idOf('acknowledgement'), 'user'], [idOf('operator-in'), `operator:${agent.id}`], [idOf('reply-out'), 'user'],
      [idOf('note-out'), `operator:${agent.id}`], [idOf('forward-out'), 'forward'], [idOf('answer-in'), 'forward'], [idOf('assigned-out'), null],
    ]);

    // Each conversation's thread: its own rows and the NULL ones; a forward none.
    expect(await threadOf(ticket.id, 'user')).toEqual({ inReplyTo: idOf('assigned-out'), references: [idOf('user-in'), idOf('assigned-out')] });
    expect(await threadOf(ticket.id, 'user', idOf('assigned-out'))).toEqual({ inReplyTo: idOf('reply-out'), references: [idOf('user-in'), idOf('reply-out')] });
    expect(await threadOf(ticket.id, operatorAudience(agent.id), idOf('assigned-out'))).toEqual({ inReplyTo: idOf('note-out'), references: [idOf('operator-in'), idOf('note-out')] });
    expect(await threadOf(ticket.id, operatorAudience(vendor.id))).toEqual({ inReplyTo: idOf('assigned-out'), references: [idOf('assigned-out')] });
    expect(await threadOf(ticket.id, 'forward')).toEqual({ references: [] });

    // One statement, each part a range of the thread index in id order (no filesort).
    const { statements } = await capture(() => threadOf(ticket.id, 'user'));
    expect(statements).toHaveLength(1);
    const plan = await query<{ table: string | null; key: string | null; Extra: string | null }>(`EXPLAIN ${statements[0].sql}`, statements[0].params as Record<string, unknown>);
    const parts = plan.filter((p) => p.table === 'mail_message_ids');
    expect(parts).toHaveLength(4);
    for (const p of parts) {
      expect(p.key).toBe('mail_message_ids_thread');
      expect(p.Extra ?? '').not.toMatch(/filesort/i);
    }

    // The mail another answers directly (In-Reply-To, else the last stored id of References) tells
    // an answer to a forward, also once the forward's message is gone, and an answer to a note.
    await forward.destroy();
    expect((await query<{ n: number }>('SELECT COUNT(*) AS n FROM mail_message_ids WHERE message_id = ? AND ticket_message_id IS NULL', [idOf('forward-out')]))[0].n).toBe(1);
    const forwardMail = { ticketId: ticket.id, audience: 'forward', note: false };
    expect(await answeredMail([idOf('acknowledgement'), idOf('forward-out')])).toEqual(forwardMail);
    expect(await answeredMail([idOf('forward-out'), idOf('answer-in'), 'unknown@elsewhere.test'])).toEqual({ ticketId: ticket.id, audience: 'forward', note: true });
    expect(await answeredMail([idOf('forward-out'), idOf('acknowledgement')])).toEqual({ ticketId: ticket.id, audience: 'user', note: false });
    expect(await answeredMail([idOf('forward-out'), idOf('acknowledgement'), idOf('forward-out')])).toEqual(forwardMail);
    expect(await answeredMail([idOf('user-in'), idOf('note-out')])).toEqual({ ticketId: ticket.id, audience: `operator:${agent.id}`, note: true });
    expect(await answeredMail([idOf('assigned-out')])).toEqual({ ticketId: ticket.id, audience: null, note: false });
    expect(await answeredMail([idOf('operator-in')])).toEqual({ ticketId: ticket.id, audience: `operator:${agent.id}`, note: false });
    expect(await answeredMail(['unknown@elsewhere.test'])).toBeNull();
    expect(await answeredMail([])).toBeNull();
  });
});
