/**
 * Mail that breaks importers, through a real dovecot and a real SMTP server: each one imports or
 * is refused with a reason in the ledger, and the mail after it is imported in the same poll. An
 * oversize mail (MAILBOX_MAX_MESSAGE_BYTES, 400 kB here) is not downloaded, and its sender gets a
 * non-delivery notice that says why, through the outbox and the mail worker.
 */
import './mailboxEnv';
import './pathologicalEnv';
import net from 'node:net';
import { DepartmentEmail, IncomingMail, TicketAttachment } from '../../src/db/models';
import { pollMailbox } from '../../src/mailbox/poll';
import type { Dovecot } from '../helpers/dovecot';
import { newEmail, unique, useApi } from '../helpers/app';
import { expectSuccess } from '../helpers/envelope';
import { waitFor, type TestSmtp } from '../helpers/smtp';
import { useDeskMailbox, messagesOf, rawMail } from './support';
import { dropQueuedMail } from '../helpers/jobs';

afterAll(() => dropQueuedMail());
const api = useApi();
const box = useDeskMailbox(api, 'pa', ['pop']);
const desk = box.desk;
let dovecot: Dovecot;
let smtp: TestSmtp;
let mailbox: DepartmentEmail;
beforeAll(() => ({ dovecot, smtp, mailbox } = box));

/** Appends the mails, then a plain one after them, polls once: the ledger lines in order. */
async function pollAll(raws: Buffer[]): Promise<IncomingMail[]> {
  const uids: string[] = [];
  for (const raw of [...raws, await rawMail({ from: newEmail('after'), to: desk, subject: 'the mail after' })]) {
    const { uid, uidValidity } = await dovecot.append(desk, raw);
    uids.push(`${uidValidity}:${uid}`);
  }
  const summary = await pollMailbox(mailbox.id);
  expect(summary).toMatchObject({ fetched: uids.length });
  const lines = await Promise.all(uids.map((remote_uid) => IncomingMail.findOne({ where: { department_email_id: mailbox.id, remote_uid } })));
  const after = lines.pop()!;
  expect(after).toMatchObject({ decision: 'new_ticket', subject: 'the mail after' });
  return lines as IncomingMail[];
}

describe('an oversize mail', () => {
  it('is refused unread, recorded with its sender and size, and its sender told why by mail', async () => {
    const from = newEmail('big');
    const raw = await rawMail({ from: `Big Sender <${from}>`, to: desk, subject: 'Holiday photos', attachments: [{ filename: 'photos.png', content: Buffer.alloc(500_000, 7) }] });
    const [line] = await pollAll([raw]);
    expect(line).toMatchObject({ decision: 'rejected', from_address: from, subject: 'Holiday photos', ticket_id: null });
    expect(line.size).toBeGreaterThan(400_000);
    expect(line.reason).toMatch(/over the limit of 400000 \(MAILBOX_MAX_MESSAGE_BYTES\)/);
    const notice = await waitFor(() => smtp.mailsTo(from)[0], 60000, 'the non-delivery notice');
    expect(notice.parsed.subject).toBe('Not delivered: Holiday photos');
    expect(notice.parsed.text).toContain('over the limit of 400000');
    expect(notice.parsed.from?.value[0].address).toBe(desk);
    expect(notice.parsed.headers.get('auto-submitted')).toBe('auto-replied');
    expect(notice.parsed.inReplyTo).toBe(`<${line.message_id}>`);
    // Flagged seen like any mail taken: the next poll does not fetch it again.
    expect(await pollMailbox(mailbox.id)).toEqual({ fetched: 0, decisions: {} });
  });

  it('from an auto-responder or a mailer daemon is refused without an answer', async () => {
    const auto = newEmail('auto');
    const lines = await pollAll([
      await rawMail({ from: auto, to: desk, headers: { 'Auto-Submitted': 'auto-replied' }, attachments: [{ filename: 'a.png', content: Buffer.alloc(500_000, 1) }] }),
      await rawMail({ from: 'MAILER-DAEMON@mx.example.net', to: desk, attachments: [{ filename: 'b.png', content: Buffer.alloc(500_000, 1) }] }),
    ]);
    expect(lines.map((l) => l.decision)).toEqual(['rejected', 'rejected']);
    await waitFor(() => smtp.received.find((m) => m.parsed.subject === 'the mail after' || m.envelopeTo.some((a) => a.startsWith('after'))), 60000, 'the next mail to be sent');
    expect(smtp.mailsTo(auto)).toEqual([]);
    expect(smtp.mailsTo('mailer-daemon@mx.example.net')).toEqual([]);
  });
});

describe('an oversize mail over POP3', () => {
  it('is refused by its header alone: the bytes of its body never cross the connection', async () => {
    // A proxy in front of dovecot's POP3 port counts what the server sends.
    let fromServer = 0;
    const proxy = net.createServer((client) => {
      const server = net.connect(dovecot.ports.pop3, '127.0.0.1');
      server.on('data', (chunk) => { fromServer += chunk.length; });
      client.pipe(server).pipe(client);
      const end = () => { client.destroy(); server.destroy(); };
      client.on('error', end); server.on('error', end); client.on('close', end); server.on('close', end);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const created = expectSuccess(await api.post(`/api/ticket/department/${box.world.department.id}/email`, {
        address: box.address('pop'), type: 1, protocol: 'pop3', server: '127.0.0.1', port: (proxy.address() as net.AddressInfo).port, encryption: 'none',
        username: box.address('pop'), password: 'secret-desk',
      }), 'Successfully created new department email!');
      const from = newEmail('bigpop');
      await dovecot.append(box.address('pop'), await rawMail({ from, to: box.address('pop'), subject: 'Scans', attachments: [{ filename: 'scan.png', content: Buffer.alloc(500_000, 3) }] }));
      await dovecot.append(box.address('pop'), await rawMail({ from: newEmail('small'), to: box.address('pop'), subject: 'the small one' }));
      expect(await pollMailbox(created.id)).toMatchObject({ fetched: 2, decisions: { rejected: 1, new_ticket: 1 } });
      const line = (await IncomingMail.findOne({ where: { department_email_id: created.id, decision: 'rejected' } }))!;
      expect(line).toMatchObject({ from_address: from, subject: 'Scans' });
      expect(line.size).toBeGreaterThan(500_000);
      expect(line.reason).toMatch(/over the limit of 400000/);
      expect(fromServer).toBeLessThan(100_000);
    } finally {
      await new Promise((resolve) => proxy.close(resolve));
    }
  });
});

describe('mail that breaks importers', () => {
  it('300 nested <div>s, a 200-character Date, ISO-2022-JP without a charset and 200 attachments each import, and the poll goes on', async () => {
    const nested = await rawMail({ from: newEmail('nest'), to: desk, subject: 'Nested', text: undefined as unknown as string, html: `${'<div>'.repeat(300)}deep inside${'</div>'.repeat(300)}` });
    const longDate = Buffer.from((await rawMail({ from: newEmail('date'), to: desk, subject: 'Long date' })).toString('binary').replace(/^Date: .*$/im, `Date: ${'Mon, 32 Foo 2026 99:99:99 +9999 '.repeat(7).slice(0, 200)}`), 'binary');
    expect(/^Date: (.*)\r$/im.exec(longDate.toString())![1]).toHaveLength(200);
    // "こんにちは、プリンターが壊れました" in ISO-2022-JP (JIS escapes), 7-bit, no charset anywhere.
    const jis = Buffer.concat([
      Buffer.from(`From: ${newEmail('jis')}\r\nTo: ${desk}\r\nSubject: JIS \x1b$B%W%j%s%?!<\x1b(B\r\nMessage-ID: <${unique('j')}@jp.test>\r\nMIME-Version: 1.0\r\nContent-Type: text/plain\r\n\r\n`),
      Buffer.from('\x1b$B$3$s$K$A$O!"%W%j%s%?!<$,2u$l$^$7$?\x1b(B\r\n', 'latin1'),
    ]);
    const many = await rawMail({
      from: newEmail('many'), to: desk, subject: 'Many files',
      attachments: Array.from({ length: 200 }, (_, i) => ({ filename: `scan-${i + 1}.png`, content: Buffer.from([137, 80, 78, 71, i % 256, 1]) })),
    });
    const lines = await pollAll([nested, longDate, jis, many]);
    expect(lines.map((l) => [l.subject, l.decision])).toEqual([['Nested', 'new_ticket'], ['Long date', 'new_ticket'], ['JIS プリンター', 'new_ticket'], ['Many files', 'new_ticket']]);
    const text = async (l: IncomingMail) => (await messagesOf(l.ticket_id!))[0].text;
    expect(await text(lines[0])).toBe('deep inside');
    expect(await text(lines[2])).toBe('こんにちは、プリンターが壊れました');
    expect(await TicketAttachment.count({ where: { ticket_id: lines[3].ticket_id! } })).toBe(200);
  });
});
