/**
 * Raw mails for the mailbox tests (not a test file itself): built with nodemailer's MailComposer,
 * as a real client would send them, with the headers each rule reads.
 */
import MailComposer from 'nodemailer/lib/mail-composer';
import { Op } from 'sequelize';
import { IncomingMail, OutboxEntry, Ticket, TicketMessage } from '../../src/db/models';
import { rmSync, writeFileSync } from 'node:fs';
import { DepartmentEmail } from '../../src/db/models';
import { closeTransports } from '../../src/mail/transports';
import { resetTlsOptions } from '../../src/mailbox/pollSummary';
import { createWorker } from '../../src/queue/runWorker';
import { mailSpec } from '../../src/wiring';
import { startDovecot, type Dovecot } from '../helpers/dovecot';
import { dropQueuedMail } from '../helpers/jobs';
import { unique, type TestApi } from '../helpers/app';
import { expectSuccess } from '../helpers/envelope';
import { startSmtp, type TestSmtp } from '../helpers/smtp';
import { mailWorld, type MailWorld } from '../notifications/support';
import { ingestMail, type IngestResult } from '../../src/mailbox/ingest';

export interface RawMailOptions {
  from: string;
  to: string | string[];
  cc?: string[];
  subject?: string;
  text?: string;
  html?: string;
  messageId?: string | null;
  inReplyTo?: string;
  references?: string[];
  headers?: Record<string, string>;
  attachments?: Array<{ filename: string; content: Buffer | string; contentType?: string; cid?: string }>;
  date?: Date;
}

/** A raw RFC 822 mail. `messageId: null` leaves the Message-ID out (MailComposer would add one). */
export async function rawMail(o: RawMailOptions): Promise<Buffer> {
  const messageId = o.messageId === undefined ? `<${unique('m')}@sender.test>` : o.messageId;
  const built = await new MailComposer({
    from: o.from, to: o.to, cc: o.cc, subject: o.subject ?? `Question ${unique('q')}`, text: 'text' in o ? o.text : 'Hello, my printer is broken.',
    html: o.html, messageId: messageId ?? undefined, inReplyTo: o.inReplyTo, references: o.references, headers: o.headers,
    attachments: o.attachments, date: o.date,
  }).compile().build();
  if (messageId !== null) return built;
  // Drop the header MailComposer always writes.
  return Buffer.from(built.toString('binary').replace(/^Message-ID: .*\r\n/im, ''), 'binary');
}

/** The ledger lines of a mailbox, oldest first. */
export const ledgerOf = (departmentEmailId: number) =>
  IncomingMail.findAll({ where: { department_email_id: departmentEmailId }, order: [['id', 'ASC']] });

/** The tickets whose first message came from `address` (tickets opened by mail from that sender). */
export async function ticketsFrom(address: string): Promise<Ticket[]> {
  const rows = await IncomingMail.findAll({ where: { from_address: address, decision: 'new_ticket' } });
  return Ticket.findAll({ where: { id: { [Op.in]: rows.map((r) => r.ticket_id!) } }, order: [['id', 'ASC']] });
}

export const messagesOf = (ticketId: number) => TicketMessage.findAll({ where: { ticket_id: ticketId }, order: [['id', 'ASC']] });

/** The ticket.mail outbox entries about a ticket (any kind), with their payloads. */
export async function ticketMailsOf(ticketId: number): Promise<Array<Record<string, any>>> {
  const rows = await OutboxEntry.findAll({ where: { name: 'ticket.mail', payload: { [Op.like]: `%"ticketId":${ticketId}%` } }, order: [['id', 'ASC']] });
  return rows.map((r) => JSON.parse(r.payload)).filter((p) => p.ticketId === ticketId);
}

/**
 * For a file's tests that hand raw mails to the ingestion itself, without a mail server (call it
 * after useApi): a mail world whose department address is the mailbox, and `ingest`, which imports
 * a raw mail fetched from it.
 */
export function useWorldMailbox() {
  const m = {} as { world: MailWorld; mailbox: DepartmentEmail; ingest(raw: Buffer): Promise<IngestResult> };
  beforeAll(async () => {
    m.world = await mailWorld(9);
    m.mailbox = m.world.address;
  });
  m.ingest = (raw) => ingestMail(raw, { departmentEmail: m.mailbox, remoteUid: unique('uid') });
  return m;
}

/**
 * For a file's tests (call it after useApi): a private dovecot with one department mailbox
 * (`desk`, created through the API as an integrator would, IMAP without encryption), a real SMTP
 * server, a mail world sending through it and the mail worker; stopped after the file. `others`
 * are more dovecot users of the same domain, which `connect` makes department mailboxes of.
 */
export function useDeskMailbox(api: TestApi, prefix: string, others: string[] = []) {
  const domain = `${unique(prefix).toLowerCase()}.test`;
  const address = (name: string) => `${name}@${domain}`;
  const PASSWORD = 'secret-desk';
  const m = { desk: address('desk'), address } as {
    desk: string; address: typeof address; dovecot: Dovecot; smtp: TestSmtp; world: MailWorld; mailbox: DepartmentEmail;
    connect(name: string, departmentId: number): Promise<DepartmentEmail>;
  };
  m.connect = async (name, departmentId) => {
    const created = expectSuccess(await api.post(`/api/ticket/department/${departmentId}/email`, {
      address: address(name), type: 1, protocol: 'imap', server: '127.0.0.1', port: m.dovecot.ports.imap, encryption: 'none', username: address(name), password: PASSWORD,
    }), 'Successfully created new department email!');
    return (await DepartmentEmail.findByPk(created.id))!;
  };
  let mailer: Awaited<ReturnType<typeof createWorker>> | undefined;
  beforeAll(async () => {
    m.dovecot = await startDovecot(['desk', ...others].map((name) => ({ user: address(name), password: PASSWORD })));
    writeFileSync(process.env.MAILBOX_TLS_CA_FILE!, m.dovecot.cert);
    resetTlsOptions();
    m.smtp = await startSmtp();
    m.world = await mailWorld(m.smtp.port);
    await dropQueuedMail();
    mailer = await createWorker(mailSpec());
    m.mailbox = await m.connect('desk', m.world.department.id);
  });
  afterAll(async () => {
    await mailer?.close();
    await m.dovecot?.stop();
    closeTransports();
    await m.smtp?.close();
    rmSync(process.env.MAILBOX_TLS_CA_FILE!, { force: true });
  });
  return m;
}
