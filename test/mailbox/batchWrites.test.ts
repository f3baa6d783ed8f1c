/**
 * A batch of mails writes its new tickets together (src/mailbox/opening.ts: one INSERT per kind of
 * row, no savepoint): new tickets, a sender with two of them, replies to an older ticket and to a
 * mail of the same batch, a duplicate and an automatic mail each import exactly once, with their
 * rows, events and outbox entries; a batch's statements do not grow with its mails; a refusal of
 * the ticket service or an INSERT the database refuses rolls the batch back, and one by one the
 * others import while the refused mail leaves nothing behind.
 */
import './mailboxEnv';
import { Op } from 'sequelize';
import { Department, DepartmentBrand, DomainEvent, MailMessageId, Ticket, TicketMessage, User } from '../../src/db/models';
import { definitions } from '../../src/db/definitions';
import { VersionedCache } from '../../src/db/versionedCache';
import { countQueries, sequelize } from '../../src/db/sequelize';
import { configCacheSettled } from '../../src/ticket/configCache';
import { pollMailbox } from '../../src/mailbox/poll';
import { newEmail, unique, useApi } from '../helpers/app';
import { waitForProgress } from '../helpers/smtp';
import { ledgerOf, messagesOf, rawMail, ticketMailsOf, useDeskMailbox } from './support';
import { dropQueuedMail } from '../helpers/jobs';

afterAll(() => dropQueuedMail());
const api = useApi();
const m = useDeskMailbox(api, 'bulkw', ['other', 'refusing', 'countwarm', 'countfive', 'countthirty', 'stalewarm', 'stalefive', 'stalethirty', 'listswarm', 'listsfive', 'liststhirty']);

const usersOf = (email: string) => User.findAll({ where: { email, type: 'user' } });
const eventsNamed = async (name: string, key: 'userId' | 'ticketId', ids: number[]) =>
  (await DomainEvent.findAll({ where: { name } })).map((e) => JSON.parse(e.payload)[key]).filter((id) => ids.includes(id));

it('a batch mixing new tickets, a sender twice, replies (to an older ticket, to a mail of the same batch), a duplicate and an automatic mail imports each once', async () => {
  const [a, b, d, e] = ['a', 'b', 'd', 'e'].map((n) => newEmail(`bw${n}`));
  const id = (n: string) => `<${unique(n)}@sender.test>`;
  // An older ticket of E, imported by an earlier poll.
  const older = id('older');
  await m.dovecot.appendAll(m.desk, [await rawMail({ from: e, to: m.desk, subject: 'Older', messageId: older })]);
  expect(await pollMailbox(m.mailbox.id)).toMatchObject({ decisions: { new_ticket: 1 } });

  const a1 = id('a1');
  const b1 = await rawMail({ from: b, to: m.desk, subject: 'B asks' });
  await m.dovecot.appendAll(m.desk, [
    await rawMail({ from: a, to: m.desk, subject: 'A asks', messageId: a1 }),
    b1,
    await rawMail({ from: e, to: m.desk, subject: 'Re: Older', inReplyTo: older, references: [older] }),
    await rawMail({ from: a, to: m.desk, subject: 'A asks again' }),
    await rawMail({ from: a, to: m.desk, subject: 'Re: A asks', inReplyTo: a1, references: [a1] }),
    b1,
    await rawMail({ from: d, to: m.desk, subject: 'Out of office', headers: { 'Auto-Submitted': 'auto-replied' } }),
  ]);
  const first = Number((await ledgerOf(m.mailbox.id)).at(-1)!.id);
  expect(await pollMailbox(m.mailbox.id)).toMatchObject({ fetched: 7, decisions: { new_ticket: 4, reply: 2, duplicate: 1 } });
  const ledger = (await ledgerOf(m.mailbox.id)).filter((l) => l.id > first);
  expect(ledger.map((l) => l.decision)).toEqual(['new_ticket', 'new_ticket', 'reply', 'new_ticket', 'reply', 'duplicate', 'new_ticket']);
  const [aTicket, bTicket, eReply, aAgain, aReply, bDuplicate, dTicket] = ledger;
  expect(eReply.ticket_id).toBe(Number((await ledgerOf(m.mailbox.id)).find((l) => l.message_id === older.slice(1, -1))!.ticket_id));
  // The reply to a mail of the same batch found its ticket (opened first, then the reply decided).
  expect(aReply.ticket_id).toBe(aTicket.ticket_id);
  expect(bDuplicate.ticket_id).toBe(bTicket.ticket_id);
  expect(bDuplicate.reason).toBe(`Already imported (incoming mail ${bTicket.id}).`);
  expect(new Set([aTicket, bTicket, aAgain, dTicket].map((l) => l.ticket_id)).size).toBe(4);
  expect((await messagesOf(aTicket.ticket_id!)).map((msg) => msg.id)).toEqual([aTicket.ticket_message_id, aReply.ticket_message_id]);

  // One user per new sender, created once, with one user.created event; one ticket.created per ticket.
  const [aUsers, bUsers, dUsers] = await Promise.all([a, b, d].map(usersOf));
  expect([aUsers.length, bUsers.length, dUsers.length]).toEqual([1, 1, 1]);
  const userIds = [aUsers[0].id, bUsers[0].id, dUsers[0].id];
  expect((await eventsNamed('user.created', 'userId', userIds)).sort()).toEqual([...userIds].sort());
  const ticketIds = [aTicket, bTicket, aAgain, dTicket].map((l) => l.ticket_id!);
  expect((await eventsNamed('ticket.created', 'ticketId', ticketIds)).sort()).toEqual([...ticketIds].sort());
  const tickets = await Ticket.findAll({ where: { id: { [Op.in]: ticketIds } }, order: [['id', 'ASC']] });
  expect(tickets.map((t) => t.user_id)).toEqual([aUsers[0].id, bUsers[0].id, aUsers[0].id, dUsers[0].id]);
  expect(new Set(tickets.map((t) => t.number)).size).toBe(4);
  // Every imported mail's Message-ID is stored for its ticket.
  const imported = ledger.filter((l) => l.decision !== 'duplicate');
  const stored = await MailMessageId.findAll({ where: { message_id: { [Op.in]: imported.map((l) => l.message_id!) }, direction: 'in' } });
  expect(new Map(stored.map((s) => [s.message_id, s.ticket_id]))).toEqual(new Map(imported.map((l) => [l.message_id!, l.ticket_id!])));

  // The acknowledgements: one per ticket of a sender that is not automatic, each its own outbox entry.
  const acks = async (ticketId: number) => (await ticketMailsOf(ticketId)).filter((p) => p.kind === 'user_ticket_opened').length;
  expect(await Promise.all(ticketIds.map(acks))).toEqual([1, 1, 1, 0]);
  // The operators hear of each ticket, the automatic one's too, and of the user's replies.
  const operatorMails = async (ticketId: number) => (await ticketMailsOf(ticketId)).filter((p) => p.recipientId).map((p) => p.kind);
  expect(await operatorMails(dTicket.ticket_id!)).toContain('operator_ticket_opened');
  expect(await operatorMails(aTicket.ticket_id!)).toEqual(expect.arrayContaining(['operator_ticket_opened', 'operator_user_ticket_reply']));

  // Nothing new: a second poll imports nothing; the senders get their acknowledgements, once each.
  expect(await pollMailbox(m.mailbox.id)).toMatchObject({ fetched: 0 });
  await waitForProgress(async () => m.smtp.mailsTo(a).length + m.smtp.mailsTo(b).length, (n) => n >= 3, 'acknowledgements sent');
  expect([m.smtp.mailsTo(a).length, m.smtp.mailsTo(b).length, m.smtp.mailsTo(d).length]).toEqual([2, 1, 0]);
});

/**
 * Three mailboxes `<prefix>warm`, `<prefix>five` and `<prefix>thirty`. `batch(size)` fills one of
 * the last two with `size` new mails first (appending 30 takes a while on a loaded machine, and
 * what is kept per process is read again after ENTRY_TTL_MS, 10 s), then polls it just after a
 * warm-up poll of the first (the definitions a batch misses are read in its transaction, and kept
 * by a read outside it), with `during` around the measured poll, and answers the statements of
 * the batch's transaction (the one that settles the ledger lines).
 */
async function batches(prefix: string, headers?: (i: number) => Record<string, string>) {
  const departmentId = m.world.department.id;
  const box = async (name: string) => ({ name, mailbox: await m.connect(name, departmentId) });
  const [warm, five, thirty] = [await box(`${prefix}warm`), await box(`${prefix}five`), await box(`${prefix}thirty`)];
  const append = async (name: string, n: number) => m.dovecot.appendAll(m.address(name), await Promise.all(Array.from({ length: n }, (_, i) => rawMail({
    from: newEmail(`bw${prefix}`), to: m.address(name), subject: `${prefix} ${i}`, headers: headers?.(i),
  }))));
  return async (size: 5 | 30, during: <T>(poll: () => Promise<T>) => Promise<T> = (poll) => poll()): Promise<string[]> => {
    await append((size === 5 ? five : thirty).name, size);
    await append(warm.name, 1);
    await pollMailbox(warm.mailbox.id);
    await Promise.all([definitions.settled(), configCacheSettled()]);
    const { result, queries } = await during(() => countQueries(() => pollMailbox((size === 5 ? five : thirty).mailbox.id)));
    expect(result).toMatchObject({ decisions: { new_ticket: size } });
    const settle = queries.find((q) => q.includes('ON DUPLICATE KEY UPDATE import_key'))!;
    const tx = /^Executing \(([^)]+)\)/.exec(settle)![1];
    return queries.filter((q) => q.startsWith(`Executing (${tx})`));
  };
}

it('a batch of new tickets runs as many statements for 30 mails as for 5', async () => {
  const batch = await batches('count');
  // The lowest of two batches of each size: on a loaded machine one can outlast what is kept per
  // process (ENTRY_TTL_MS) or a Redis read of its version, and read the kept definitions again
  // (four statements more; the next test covers that case itself).
  const lowest = async (size: 5 | 30) => Math.min((await batch(size)).length, (await batch(size)).length);
  const five = await lowest(5);
  const thirty = await lowest(30);
  expect(thirty).toBe(five);
  // 25 here: START and COMMIT, the batch's lookups (senders, addresses, sent ids, ledger keys, the
  // tickets each sender opened lately for the new-ticket flood limit), the
  // ledger claimed and settled, the mailbox's row locked (its settings still those the poll began
  // with: src/mailbox/pollGuard.ts) and the cursor, what is read once per transaction (spam rules, the
  // department's facts, organisation domains, the operators to notify, twice; custom fields,
  // webhooks, brands, core and ticket settings are kept per process), the numbers check, and one
  // INSERT per kind of row (users, tickets, messages, audit rows, events twice, outbox, Message-IDs).
  expect(thirty).toBeLessThanOrEqual(25);
});

it('a batch of mails relayed by lists (an X-Loop each, none ours) runs no statement per mail', async () => {
  // Each marker is looked up among our addresses and the brands' for the whole batch at once.
  const batch = await batches('lists', (i) => ({ 'X-Loop': `list-${i}-${unique('l')}@lists.test` }));
  const lowest = async (size: 5 | 30) => Math.min((await batch(size)).length, (await batch(size)).length);
  const [five, thirty] = [await lowest(5), await lowest(30)];
  // No statement per mail (a lookup per mail was 25 more for 30 mails). At most the four kept
  // definitions read again, when a batch on a loaded machine outlasts their kept time (CI saw one).
  expect(thirty - five).toBeLessThanOrEqual(4);
});

it('a batch that finds the kept definitions and configuration stale reads each once, however many mails it holds', async () => {
  // What a batch meets on a loaded machine: the kept values are stale (ENTRY_TTL_MS, or the Redis
  // read of their version gave up) and the read that keeps them again, outside the transaction,
  // does not land during the batch (here every kept value misses). Each is then read in the
  // transaction, once: the brands were read once per mail (30 reads for 30 new users).
  const batch = await batches('stale');
  const cold = async <T>(poll: () => Promise<T>): Promise<T> => {
    const miss = jest.spyOn(VersionedCache.prototype, 'get').mockImplementation(() => undefined);
    try {
      return await poll();
    } finally {
      miss.mockRestore();
    }
  };
  const brandReads = (statements: string[]) => statements.filter((q) => q.includes('SELECT id, enabled FROM brands')).length;
  const five = await batch(5, cold);
  const thirty = await batch(30, cold);
  expect([brandReads(five), brandReads(thirty)]).toEqual([1, 1]);
  expect(thirty.length).toBe(five.length);
});

it('a refusal by the ticket service fails the batch: one by one, each mail is rejected and leaves no user behind', async () => {
  const departmentId = (await Department.create({ name: unique('Refused'), email_templates: m.world.department.email_templates })).id;
  await DepartmentBrand.create({ department_id: departmentId, brand_id: m.world.brand.id });
  const mailbox = await m.connect('other', departmentId);
  // The department is no longer of the mailbox's brand: opening a ticket in it is refused.
  await DepartmentBrand.destroy({ where: { department_id: departmentId } });
  const senders = [newEmail('bwr'), newEmail('bwr'), newEmail('bwr')];
  await m.dovecot.appendAll(m.address('other'), await Promise.all(senders.map((from, i) => rawMail({ from, to: m.address('other'), subject: `Refused ${i}` }))));

  expect(await pollMailbox(mailbox.id)).toMatchObject({ fetched: 3, decisions: { rejected: 3 } });
  const ledger = await ledgerOf(mailbox.id);
  expect(ledger.map((l) => l.reason)).toEqual(senders.map(() => 'No ticket opened: The selected department is invalid.'));
  expect(ledger.map((l) => l.import_key)).toEqual([null, null, null]);
  for (const from of senders) expect(await usersOf(from)).toHaveLength(0);
  // Rejected mails are done with: flagged, and not fetched again.
  expect((await m.dovecot.messages(m.address('other'))).every((msg) => msg.flags.includes('\\Seen'))).toBe(true);
  expect(await pollMailbox(mailbox.id)).toMatchObject({ fetched: 0 });
});

it('a multi-row INSERT the database refuses fails the batch: one by one, the others import and the refused mail is an error that leaves nothing', async () => {
  const mailbox = await m.connect('refusing', m.world.department.id);
  const trigger = `refuse_${unique('t').replace(/[^a-z0-9_]/gi, '_')}`;
  // The database itself refuses one row of the tickets INSERT.
  await sequelize().query(`CREATE TRIGGER ${trigger} BEFORE INSERT ON tickets FOR EACH ROW
    IF NEW.subject LIKE '%REFUSED-BY-THE-DATABASE%' THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'refused by the test trigger'; END IF`);
  try {
    const senders = [newEmail('bwt'), newEmail('bwt'), newEmail('bwt'), newEmail('bwt')];
    await m.dovecot.appendAll(m.address('refusing'), await Promise.all(senders.map((from, i) => rawMail({
      from, to: m.address('refusing'), subject: i === 2 ? 'REFUSED-BY-THE-DATABASE' : `Accepted ${i}`,
    }))));
    expect(await pollMailbox(mailbox.id)).toMatchObject({ fetched: 4, decisions: { new_ticket: 3, error: 1 } });
    const ledger = await ledgerOf(mailbox.id);
    expect(ledger.map((l) => l.decision)).toEqual(['new_ticket', 'new_ticket', 'error', 'new_ticket']);
    expect(ledger[2].reason).toContain('refused by the test trigger');
    expect(await usersOf(senders[2])).toHaveLength(0);
    for (const i of [0, 1, 3]) {
      expect(await Ticket.count({ where: { user_id: (await usersOf(senders[i]))[0].id } })).toBe(1);
      expect(await TicketMessage.count({ where: { ticket_id: ledger[i].ticket_id! } })).toBe(1);
      expect((await ticketMailsOf(ledger[i].ticket_id!)).filter((p) => p.kind === 'user_ticket_opened')).toHaveLength(1);
    }
    // The refused mail stays unread in the mailbox for a person to look at.
    expect((await m.dovecot.messages(m.address('refusing'))).filter((msg) => !msg.flags.includes('\\Seen'))).toHaveLength(1);
  } finally {
    await sequelize().query(`DROP TRIGGER IF EXISTS ${trigger}`);
  }
});
