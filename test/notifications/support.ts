/**
 * Record factories for the notification and scheduler tests (not a test file itself). Tickets and
 * messages are written with the models and the events emitted in the same transaction, as the
 * ticket services emit them (src/ticket/tickets/service.ts on the tickets branch): the
 * notifications cannot tell the difference. Every record gets unique names and addresses.
 */
import { randomBytes } from 'node:crypto';
import { Op } from 'sequelize';
import {
  Brand, Channel, Department, DepartmentBrand, DepartmentEmail, DepartmentGroup, EmailTemplate, Group, OperatorDepartment, OutboxEntry,
  Setting, Ticket, TicketAssignee, TicketAttachment, TicketMessage, TicketPriority, TicketStatus, TicketWatcher, User, UserGroup,
} from '../../src/db/models';
import { BY, MESSAGE_TYPE, type ForwardExtra } from '../../src/db/models/TicketMessage';
import { now } from '../../src/db/entity';
import { transaction } from '../../src/db/transaction';
import { emit } from '../../src/events';
import { put } from '../../src/storage/uploads';
import { EMAIL_TEMPLATE_KEYS } from '../../src/ticket/templateMapping';
import { newEmail, unique } from '../helpers/app';
import { dropQueuedMail } from '../helpers/jobs';
import { startSmtp, waitFor, type ReceivedMail, type SmtpRefusals, type TestSmtp } from '../helpers/smtp';
import { mailSpec } from '../../src/wiring';
import { closeTransports } from '../../src/mail/transports';
import { createWorker } from '../../src/queue/runWorker';

export async function ticketSetting(name: string): Promise<string> {
  return (await Setting.findOne({ where: { scope: 'ticket', name } }))!.value;
}

export async function setTicketSetting(name: string, value: string): Promise<void> {
  await Setting.update({ value }, { where: { scope: 'ticket', name } });
}

/** The shipped templates (for every brand), by name. */
export async function shippedTemplates(): Promise<Record<string, number>> {
  const rows = await EmailTemplate.findAll({ where: { brand_id: null } });
  return Object.fromEntries(rows.map((t) => [t.name, t.id]));
}

/** A department's `email_templates`: the shipped templates, `templates` overriding some (-1 disables). */
async function shippedMapping(templates: Record<string, number>): Promise<string> {
  const shipped = await shippedTemplates();
  return JSON.stringify({ ...Object.fromEntries(EMAIL_TEMPLATE_KEYS.map((k) => [k, shipped[k] ?? -1])), ...templates });
}

export interface MailWorld {
  brand: Brand;
  department: Department;
  /** The department's address: its tickets' mail goes out from it. */
  address: DepartmentEmail;
  /** Linked to the department directly. */
  direct: User;
  /** In an operator group of the department. */
  grouped: User;
  /** Linked to the department, but inactive. */
  inactive: User;
  /** An operator of no department. */
  outsider: User;
  openStatus: number;
  resolvedStatus: number;
  autoCloseStatus: number;
  priorityId: number;
  channels: Record<'web' | 'email' | 'api', number>;
}

export const operator = (values: Partial<User> = {}) =>
  User.create({ type: 'operator', email: newEmail('op'), firstname: 'Otto', lastname: unique('Op'), active: 1, ...values });

export const customer = (brandId: number, values: Partial<User> = {}) =>
  User.create({ type: 'user', brand_id: brandId, email: newEmail('cu'), firstname: 'Uma', lastname: 'User', ...values });

/**
 * A brand sending through the test SMTP server, a department of it mapping the shipped templates
 * (`templates` overrides some: -1 disables), with an address and operators.
 */
export async function mailWorld(smtpPort: number, templates: Record<string, number> = {}): Promise<MailWorld> {
  const tag = unique('w').toLowerCase();
  const brand = await Brand.create({
    name: `Acme ${tag}`, enabled: 1, system_url: `https://${tag}.support.test/`, default_email: `help@${tag}.test`,
    global_email_header: '<p>ACME-HEADER</p>', global_email_footer: '<p>ACME-FOOTER</p>', email_method: 'smtp',
    smtp_host: '127.0.0.1', smtp_port: smtpPort, smtp_encryption: null,
  });
  const department = await Department.create({ name: `Dept ${tag}`, email_templates: await shippedMapping(templates) });
  await DepartmentBrand.create({ department_id: department.id, brand_id: brand.id });
  const address = await DepartmentEmail.create({ department_id: department.id, brand_id: brand.id, address: `desk@${tag}.test` });
  const [direct, grouped, inactive, outsider] = await Promise.all([operator(), operator(), operator({ active: 0 }), operator()]);
  await OperatorDepartment.bulkCreate([{ user_id: direct.id, department_id: department.id }, { user_id: inactive.id, department_id: department.id }]);
  const group = await Group.create({ type: 'operator', name: `Group ${tag}` });
  await UserGroup.create({ user_id: grouped.id, group_id: group.id });
  await DepartmentGroup.create({ department_id: department.id, group_id: group.id });
  const statuses = await TicketStatus.findAll();
  const channels = await Channel.findAll();
  const channel = (name: string) => channels.find((c) => c.name.toLowerCase() === name)!.id;
  return {
    brand, department, address, direct, grouped, inactive, outsider,
    openStatus: Number(await ticketSetting('default_open_status')),
    resolvedStatus: Number(await ticketSetting('default_resolved_status')),
    autoCloseStatus: statuses.find((s) => s.auto_close === 1)!.id,
    priorityId: (await TicketPriority.findOne({ order: [['order', 'ASC']] }))!.id,
    channels: { web: channel('web'), email: channel('email'), api: channel('api') },
  };
}

/** A second department of the world's brand, mapping the shipped templates, with an active and an inactive operator. */
export async function otherDepartment(world: MailWorld, templates: Record<string, number> = {}) {
  const department = await Department.create({ name: unique('Moved to '), email_templates: await shippedMapping(templates) });
  await DepartmentBrand.create({ department_id: department.id, brand_id: world.brand.id });
  const [member, inactive] = await Promise.all([operator(), operator({ active: 0 })]);
  await OperatorDepartment.bulkCreate([{ user_id: member.id, department_id: department.id }, { user_id: inactive.id, department_id: department.id }]);
  return { department, member, inactive };
}

/**
 * For a file's tests (call it after useApi): a real SMTP server (refusing what `refuse` says:
 * startSmtp), a mail world sending through it, and the mail worker, started before the tests and
 * stopped after them.
 */
export function useMailWorld(refuse?: SmtpRefusals): { smtp: TestSmtp; world: MailWorld } {
  const m = {} as { smtp: TestSmtp; world: MailWorld };
  let worker: Awaited<ReturnType<typeof createWorker>>;
  beforeAll(async () => {
    m.smtp = await startSmtp({ refuse });
    m.world = await mailWorld(m.smtp.port);
    await dropQueuedMail();
    worker = await createWorker(mailSpec());
  });
  afterAll(async () => {
    await worker.close();
    closeTransports();
    await m.smtp.close();
  });
  return m;
}

const number = () => `${Math.floor(Math.random() * 9e8) + 1e8}${Math.floor(Math.random() * 10)}`;

export interface OpenTicketOptions {
  user?: User;
  /** The first message's author when not the user (an operator opening it on behalf of the user, or an internal ticket's owner). */
  author?: User;
  internal?: boolean;
  cc?: string[];
  subject?: string;
  text?: string;
  channel?: 'web' | 'email' | 'api';
  assigned?: number[];
  watching?: number[];
  sendUserEmail?: boolean;
  sendOperatorsEmail?: boolean;
  values?: Partial<Ticket>;
  /** Emit ticket.created (default true). */
  emitEvent?: boolean;
}

/** Opens a ticket with its first message and emits ticket.created in the same transaction (as createTicket does). */
export async function openTicket(world: MailWorld, o: OpenTicketOptions = {}): Promise<{ ticket: Ticket; message: TicketMessage; user: User }> {
  const user = o.user ?? (o.internal ? o.author! : await customer(world.brand.id));
  const author = o.author ?? user;
  return transaction(async (t) => {
    const at = now();
    const ticket = await Ticket.create({
      number: number(), department_id: world.department.id, department_email_id: world.address.id, brand_id: world.brand.id,
      channel_id: world.channels[o.channel ?? 'api'], user_id: user.id, status_id: world.openStatus, priority_id: world.priorityId,
      subject: o.subject ?? `Printer ${unique('p')} <on fire> & smoking`, cc: o.cc?.length ? JSON.stringify(o.cc) : null,
      internal: o.internal ? 1 : 0, token: randomBytes(20).toString('hex'), last_reply_time: at, last_reply_by: author.type === 'operator' ? 0 : 1,
      created_at: at, updated_at: at, ...o.values,
    }, { transaction: t });
    if (o.assigned?.length) await TicketAssignee.bulkCreate(o.assigned.map((user_id) => ({ ticket_id: ticket.id, user_id })), { transaction: t });
    if (o.watching?.length) await TicketWatcher.bulkCreate(o.watching.map((user_id) => ({ ticket_id: ticket.id, user_id })), { transaction: t });
    const message = await TicketMessage.create({
      ticket_id: ticket.id, channel_id: ticket.channel_id, user_id: author.id, by: author.type === 'operator' ? BY.OPERATOR : BY.USER,
      type: MESSAGE_TYPE.MESSAGE, text: o.text ?? 'It smells of "smoke" < 2 m away.\nPlease help & hurry.', created_at: at, updated_at: at,
    }, { transaction: t });
    if (o.emitEvent !== false) {
      await emit(t, 'ticket.created', {
        ticketId: ticket.id, messageId: message.id, sendUserEmail: o.sendUserEmail ?? true, sendOperatorsEmail: o.sendOperatorsEmail ?? true,
      });
    }
    return { ticket, message, user };
  });
}

export interface AddMessageOptions {
  type?: number;
  isDraft?: boolean;
  text?: string;
  sendUserEmail?: boolean;
  sendOperatorsEmail?: boolean;
  attachments?: Array<{ name: string; contents: Buffer }>;
  extra?: ForwardExtra;
}

/** Adds a reply, note or draft and emits message.created (or, for a forward, message.forwarded), as the services do. */
export async function addMessage(ticket: Ticket, author: User, o: AddMessageOptions = {}): Promise<TicketMessage> {
  return transaction(async (t) => {
    const at = now();
    const type = o.type ?? MESSAGE_TYPE.MESSAGE;
    const byUser = author.type !== 'operator';
    const message = await TicketMessage.create({
      ticket_id: ticket.id, channel_id: ticket.channel_id, user_id: author.id, by: byUser ? BY.USER : BY.OPERATOR, type,
      text: o.text ?? `Reply ${unique('r')}`, is_draft: o.isDraft ? 1 : 0, extra: o.extra ? JSON.stringify(o.extra) : null,
      created_at: at, updated_at: at,
    }, { transaction: t });
    for (const file of o.attachments ?? []) {
      const upload = await put(file.contents, file.name, t);
      await TicketAttachment.create({ ticket_id: ticket.id, message_id: message.id, upload_hash: upload.hash, original_name: file.name }, { transaction: t });
    }
    if (type === MESSAGE_TYPE.FORWARD) {
      await emit(t, 'message.forwarded', { ticketId: ticket.id, messageId: message.id });
    } else {
      await emit(t, 'message.created', {
        ticketId: ticket.id, messageId: message.id,
        sendUserEmail: !o.isDraft && (o.sendUserEmail ?? true),
        sendOperatorsEmail: !o.isDraft && (o.sendOperatorsEmail ?? byUser),
      });
    }
    return message;
  });
}

/** The ticket.mail outbox entries of a ticket, with their payloads. */
export async function mailEntries(ticketId: number): Promise<Array<{ entry: OutboxEntry; payload: Record<string, any> }>> {
  const rows = await OutboxEntry.findAll({ where: { name: 'ticket.mail', payload: { [Op.like]: `%"ticketId":${ticketId}%` } }, order: [['id', 'ASC']] });
  return rows.map((entry) => ({ entry, payload: JSON.parse(entry.payload) })).filter((e) => e.payload.ticketId === ticketId);
}

/** Waits until every ticket.mail entry of the ticket was processed (sent or skipped) or failed for good. */
export async function settled(ticketId: number, timeoutMs = 60000): Promise<void> {
  await waitFor(async () => (await mailEntries(ticketId)).every(({ entry }) => entry.processed_at || entry.failed_at), timeoutMs, `the mails of ticket ${ticketId}`);
}

/** The mails of a ticket the server received, by its X-Helpdesk-Ticket header. */
export const mailsOf = (smtp: TestSmtp, ticket: Ticket): ReceivedMail[] =>
  smtp.received.filter((m) => m.parsed.headers.get('x-helpdesk-ticket') === ticket.number);

/** Waits for the mail of a ticket that reaches `address`. */
export const mailTo = (smtp: TestSmtp, ticket: Ticket, address: string, what = `the mail to ${address}`) =>
  waitFor(() => mailsOf(smtp, ticket).find((m) => m.envelopeTo.includes(address)), 60000, what);

/** Waits for the mail about a message of a ticket (its Message-ID names the message). */
export const mailAbout = (smtp: TestSmtp, ticket: Ticket, messageId: number, what = `the mail about message ${messageId}`) =>
  waitFor(() => mailsOf(smtp, ticket).find((m) => m.parsed.messageId?.startsWith(`<t${ticket.id}.m${messageId}.`)), 60000, what);
