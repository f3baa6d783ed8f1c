import { randomBytes } from 'node:crypto';
import { Op, QueryTypes, type FindOptions, type Transaction, type WhereOptions } from 'sequelize';
import { now } from '../../db/entity';
import {
  Brand, Department, DepartmentBrand, DepartmentEmail, SlaPlan, Ticket, TicketAssignee, TicketLink, TicketMessage, TicketPriority,
  TicketStatus, TicketTag, TicketTagLink, TicketWatcher, User,
} from '../../db/models';
import { setLinks } from '../../db/links';
import { sequelize } from '../../db/sequelize';
import { insertRows } from '../../db/insertRows';
import { saveChanges } from '../../db/saveChanges';
import { emit, emitAll, type TicketUpdateCause } from '../../events';
import { applyCustomFieldValues } from '../../customfields/values';
import { ValidationError, invalid } from '../../errors';
import { assertExist } from '../../db/exists';
import { assertAttachments, type AttachmentInput } from '../attachmentFiles';
import { addressesOf, assertPast, ccWithoutUser, jsonList, ownAddresses, type ChannelName } from '../common';
import { inDepartment } from '../priorityScope';
import { sqlCondition } from '../../db/sql';
import { writeMessages } from '../messages/service';
import { BY, MESSAGE_TYPE } from '../../db/models/TicketMessage';
import { cachedTicketSettings, type TicketSettings } from '../ticketSettings';
import { NO_DUE_TIMES, currentDueTime, slaDueTimes, type DueTimes } from './due';
import { createFacts, type CreateFacts } from './createFacts';
import { resolvePeople } from './people';
import { effectiveFormat, insertNumbered } from './number';
import { auditSnapshot, createdSnapshot, diff, recordAudit, recordAudits } from './audit';
import { movingMessages } from './search/engine';

/**
 * The domain rules of tickets: opening (people, department and brand, number, SLA, first message),
 * updating, trash and merge. The API's resources and the mailbox worker call these with typed
 * inputs inside a transaction; each emits its event (src/events.ts) in that transaction.
 */

/**
 * A ticket's `token`: the secret of its frontend view link (`?token=`) and of its reply
 * sub-address (../mail/replyAddress.ts). Drawn when it is opened, and again when its user changes.
 */
export const newTicketToken = (): string => randomBytes(20).toString('hex');

/** A ticket to open. Ids are checked; a 422 names the field the way the API's parameters do. */
export interface CreateTicketInput {
  /** Default: the default brand. */
  brandId?: number;
  /** Must be assigned to the brand. */
  departmentId: number;
  /** The department address the ticket belongs to (its mail goes out from it); default the department's first address in the brand. */
  departmentEmailId?: number | null;
  /** Default: the `default_open_status` setting. */
  statusId?: number;
  /** Default: the first priority (by order) offered in the department. */
  priorityId?: number;
  subject: string;
  /** The first message. */
  text: string;
  /**
   * Who opens it: a user of the brand; an operator for an internal ticket; or an operator opening
   * it `onBehalfOf` a user (the first message is then the operator's).
   */
  userId?: number;
  onBehalfOf?: number;
  /** Without `userId`: the user of the brand with this address (also an additional one), created when there is none. */
  userEmail?: string;
  /** For a user created by `userEmail` only; an existing user is never changed. */
  userFirstname?: string | null;
  userLastname?: string | null;
  /** Creates an organisation for a user created by `userEmail`. */
  userOrganisation?: string | null;
  userIpAddress?: string | null;
  /** Owned by an operator (`userId`), seen by operators only. */
  internal?: boolean;
  /** Default `api`. */
  channel?: ChannelName;
  tagIds?: number[];
  /** Operators; default the department's `default_assignedto`. */
  assignedTo?: number[];
  watching?: number[];
  /** Keyed by ticket custom field id. Required fields are enforced except for email tickets. */
  customfields?: Record<string, unknown>;
  cc?: string[];
  attachments?: AttachmentInput[];
  /** UNIX seconds (not in the future); applies to the ticket and its first message, and SLA times count from it. */
  createdAt?: number;
  /** An SLA plan (due times from the plan's targets for the priority). */
  slaPlanId?: number | null;
  /** Default true. */
  sendUserEmail?: boolean;
  /** Default true. */
  sendOperatorsEmail?: boolean;
}

export interface CreatedTicket {
  /** As written: every column as the database holds it (nothing to read back). */
  ticket: Ticket;
  /** Its first message. */
  message: TicketMessage;
  /** Its user. */
  owner: User;
  /** Whether nothing links to it yet: no tags, assigned or watching operators, custom field values. */
  unlinked: boolean;
}

/** What an update changes; every field optional. `tagIds`, `assignedTo`, `watching`, `cc` replace; `link`/`unlink` add and remove. */
export interface UpdateTicketInput {
  /** The department (and department email) must then be assigned to the new brand. */
  brandId?: number;
  userId?: number;
  departmentId?: number;
  departmentEmailId?: number | null;
  statusId?: number;
  priorityId?: number;
  subject?: string;
  tagIds?: number[];
  assignedTo?: number[];
  watching?: number[];
  link?: number[];
  unlink?: number[];
  /** A plan recomputes the due times from the ticket's creation; 0 or null clears plan and due times. */
  slaPlanId?: number | null;
  replyDueTime?: number | null;
  resolveDueTime?: number | null;
  customfields?: Record<string, unknown>;
  /** Locked custom fields change only when true. */
  overwriteCustomfieldValues?: boolean;
  cc?: string[];
  /** True: the user cannot reply, and the ticket is closed (the default resolved status). */
  locked?: boolean;
}

/** The 422 of an update that cannot be applied (the spec's words). */
export const updateFailed = () => new ValidationError('There was an error updating the ticket.');

const departmentInBrand = async (departmentId: number, brandId: number, transaction: Transaction) =>
  !!(await DepartmentBrand.findOne({ where: { department_id: departmentId, brand_id: brandId }, transaction }));

/** The address a ticket of this department and brand belongs to by default: the first of the brand, else none. */
async function defaultDepartmentEmail(departmentId: number, brandId: number, transaction: Transaction): Promise<number | null> {
  const email = await DepartmentEmail.findOne({ attributes: ['id'], where: { department_id: departmentId, brand_id: brandId }, order: [['id', 'ASC']], transaction });
  return email?.id ?? null;
}

/** Whether the priority is offered in the department (../priorityScope.ts), as opening a ticket requires. */
async function priorityOffered(priorityId: number, departmentId: number, transaction: Transaction): Promise<boolean> {
  const c = sqlCondition`id = ${priorityId} AND (${inDepartment(departmentId)})`;
  return !!(await TicketPriority.findOne({ attributes: ['id'], where: c.literal as WhereOptions, replacements: c.replacements, transaction } as FindOptions));
}

async function emailOfDepartment(emailId: number, departmentId: number, brandId: number, transaction: Transaction): Promise<boolean> {
  return !!(await DepartmentEmail.findOne({ attributes: ['id'], where: { id: emailId, department_id: departmentId, brand_id: brandId }, transaction }));
}

/** A status change: resolving stamps resolved_time, leaving the resolved status reopens. */
function statusValues(ticket: Pick<Ticket, 'status_id' | 'resolved_time'>, statusId: number, settings: TicketSettings, at: number): Partial<Ticket> {
  const resolved = settings.defaultResolvedStatus;
  if (resolved !== null && statusId === resolved) return { status_id: statusId, resolved_time: ticket.resolved_time ?? at };
  if (ticket.resolved_time !== null) return { status_id: statusId, resolved_time: null, reopened_time: at };
  return { status_id: statusId };
}

const assertOperators = (field: string, ids: number[] | undefined, transaction: Transaction) =>
  assertExist(User, field, ids, transaction, { type: 'operator' });

/**
 * Opens a ticket. Its cost is part of the contract (issue 18: at most 12 statements for a request
 * with its message): the configuration is checked in one statement (./createFacts.ts), the ticket
 * is inserted with its number and its first message's reply time, the message is written without
 * reading the ticket back, and the audit row is built from what was written. `known.settings`: the
 * ticket settings the caller read in this transaction (else from the config cache).
 */
export async function createTicket(input: CreateTicketInput, transaction: Transaction, known: { settings?: TicketSettings } = {}): Promise<CreatedTicket> {
  return (await createTickets([input], transaction, known))[0];
}

/** A ticket to open, checked: what createTickets writes it with. */
interface Checked {
  input: CreateTicketInput;
  brandId: number;
  department: NonNullable<CreateFacts['department']>;
  departmentEmailId: number | null;
  statusId: number;
  priorityId: number;
  channel: ChannelName;
  channelId: number;
  createdAt: number;
  attachments: AttachmentInput[];
}

/** The checks of one ticket to open, in the order their 422s take precedence; nothing is written. */
async function check(input: CreateTicketInput, settings: TicketSettings, at: number, transaction: Transaction): Promise<Checked> {
  assertPast(input.createdAt, at);
  const attachments = input.attachments ?? [];
  assertAttachments(attachments, settings);
  const channel = input.channel ?? 'api';
  const statusId = input.statusId ?? settings.defaultOpenStatus;
  const facts = await createFacts({
    brandId: input.brandId, departmentId: input.departmentId, departmentEmailId: input.departmentEmailId, statusId,
    priorityId: input.priorityId, channel,
  }, transaction);
  if (facts.brandId === null) {
    if (input.brandId === undefined) throw new Error('No brand exists: run the seed');
    throw invalid('brand');
  }
  const department = facts.department;
  if (!department || !facts.departmentInBrand) throw invalid('department');
  if (input.departmentEmailId && facts.departmentEmailId === null) throw invalid('department_email');
  if (statusId === null) throw new ValidationError('The status field is required.');
  if (facts.statusId === null) throw invalid('status');
  if (facts.priorityId === null) {
    if (input.priorityId !== undefined) throw invalid('priority');
    throw new ValidationError('The priority field is required.');
  }
  await assertExist(TicketTag, 'tag', input.tagIds, transaction);
  await assertOperators('assignedto', input.assignedTo, transaction);
  await assertOperators('watching', input.watching, transaction);
  // A disabled plan is given to no new ticket (the tickets that have it keep it).
  if (input.slaPlanId) await assertExist(SlaPlan, 'sla_plan', input.slaPlanId, transaction, { enabled: 1 });
  if (facts.channelId === null) throw new Error(`The channel "${channel}" does not exist: run the seed`);
  return {
    input, brandId: facts.brandId, department, departmentEmailId: facts.departmentEmailId, statusId, priorityId: facts.priorityId,
    channel, channelId: facts.channelId, createdAt: input.createdAt ?? at, attachments,
  };
}

/**
 * Opens tickets, in order, each as createTicket opens one, with one statement per kind of row for
 * all of them: every ticket is checked first (the first refusal is thrown, before anything is
 * written), then their people found or created (./people.ts: new users in one INSERT), the
 * tickets inserted and numbered, their links, first messages and audit rows written, and their
 * `ticket.created` events emitted (one INSERT; the outbox entries of their notifications one
 * more). A batch of imported mails opens its new tickets so.
 */
export async function createTickets(inputs: CreateTicketInput[], transaction: Transaction, known: { settings?: TicketSettings } = {}): Promise<CreatedTicket[]> {
  const at = now();
  const settings = known.settings ?? (await cachedTicketSettings(transaction));
  const checked: Checked[] = [];
  for (const input of inputs) checked.push(await check(input, settings, at, transaction));
  if (!checked.length) return [];
  const people = await resolvePeople(checked.map(({ input, brandId }) => ({ input, brandId })), transaction);
  const owned = await ownAddresses(people.map((p) => p.owner), transaction, checked.some((c) => c.input.cc?.length));

  // The first message's reply time is written with the ticket (no update after the message).
  const rows = await Promise.all(checked.map(async (c, i) => {
    const { input, createdAt, statusId } = c;
    const due: DueTimes = input.slaPlanId ? await slaDueTimes(input.slaPlanId, c.priorityId, createdAt, settings.defaultTimezone, transaction) : NO_DUE_TIMES;
    const resolved = settings.defaultResolvedStatus !== null && statusId === settings.defaultResolvedStatus;
    const cc = ccWithoutUser(input.cc, owned.get(people[i].owner.id)!);
    return {
      department_id: c.department.id, department_email_id: c.departmentEmailId, brand_id: c.brandId,
      channel_id: c.channelId, user_id: people[i].owner.id, status_id: statusId, priority_id: c.priorityId,
      sla_plan_id: input.slaPlanId || null, subject: input.subject, ...due,
      due_time: resolved ? null : currentDueTime({ first_reply_time: null, ...due }),
      resolved_time: resolved ? createdAt : null, cc: cc.length ? JSON.stringify(cc) : null, locked: 0, merged: 0, internal: input.internal ? 1 : 0,
      last_reply_time: createdAt, last_reply_by: people[i].author.type === 'operator' ? BY.OPERATOR : BY.USER,
      token: newTicketToken(), created_at: createdAt, updated_at: at,
    };
  }));
  const tickets = await insertNumbered(
    checked.map((c) => ({ tokens: effectiveFormat(c.department.ticket_number_format, settings.ticketNumberFormat), date: new Date(c.createdAt * 1000) })),
    settings.defaultTimezone,
    (numbers) => insertRows(Ticket, rows.map((row, i) => ({ number: numbers[i], ...row })), transaction),
    transaction,
  );

  const links = checked.map(({ input, department }) => ({
    tags: [...new Set(input.tagIds ?? [])],
    assigned: [...new Set(input.assignedTo ?? (department.default_assignedto ? [department.default_assignedto] : []))],
    watching: [...new Set(input.watching ?? [])],
  }));
  await insertLinks(TicketTagLink, 'tag_id', tickets.map((t, i) => [t.id, links[i].tags]), transaction);
  await insertLinks(TicketAssignee, 'user_id', tickets.map((t, i) => [t.id, links[i].assigned]), transaction);
  await insertLinks(TicketWatcher, 'user_id', tickets.map((t, i) => [t.id, links[i].watching]), transaction);
  // The custom field values, the first messages and the audit rows need nothing of one another:
  // they are sent together (the driver pipelines them on the transaction's connection), one round
  // trip rather than three; a refusal (a required field missing) rolls all of them back.
  const withValues = checked.map(({ input }) => Object.keys(input.customfields ?? {}).length > 0);
  const values = (async () => {
    for (const [i, { input, brandId, department, channel }] of checked.entries()) {
      await applyCustomFieldValues('ticket', tickets[i].id, input.customfields, {
        brandId, departmentId: department.id, creating: channel !== 'email', overwriteLocked: true, transaction,
      });
    }
  })();
  // The first messages: the checks addMessage makes hold by construction (the author is the owner,
  // or an operator; the new ticket is neither locked nor merged, and this transaction holds it).
  // With attachments they wait for the values' checks: a refused ticket stores no file (a file
  // store's writes are not rolled back with the transaction).
  const written = (checked.some((c) => c.attachments.length) ? values : Promise.resolve()).then(() => writeMessages(checked.map((c, i) => ({
    ticket: tickets[i], author: people[i].author, type: MESSAGE_TYPE.MESSAGE, text: c.input.text, isDraft: false, pinned: false, cc: [],
    attachments: c.attachments, userIpAddress: c.input.userIpAddress ?? null, createdAt: c.createdAt, channelId: c.channelId, socialId: null,
  })), transaction));
  // The audit's snapshots of the new tickets, from what was written (custom field values, when any
  // were given, are read back as auditSnapshot does, once they are written).
  const snapshots = withValues.some(Boolean)
    ? values.then(() => Promise.all(tickets.map((t, i) => (withValues[i] ? auditSnapshot(t.id, transaction) : createdSnapshot(t, { tags: links[i].tags, assigned: links[i].assigned, watching: links[i].watching })))))
    : Promise.resolve(tickets.map((t, i) => createdSnapshot(t, { tags: links[i].tags, assigned: links[i].assigned, watching: links[i].watching })));
  const audited = snapshots.then((after) => recordAudits(tickets.map((t, i) => ({ ticketId: t.id, action: 'created' as const, changes: diff(null, after[i]) })), transaction));
  const [, messages, audits] = await Promise.all([values, written, audited]);
  // The notifications take the rows just written with the events, rather than read them back.
  await emitAll(transaction, checked.map(({ input, department, channel }, i) => ({
    name: 'ticket.created' as const,
    payload: {
      ticketId: tickets[i].id, messageId: messages[i].id, sendUserEmail: input.sendUserEmail ?? true, sendOperatorsEmail: input.sendOperatorsEmail ?? true,
      audit: audits[i],
    },
    facts: { ticket: tickets[i], message: messages[i], department, channelName: channel, assigned: links[i].assigned },
  })));
  return checked.map(({ input }, i) => ({
    ticket: tickets[i], message: messages[i], owner: people[i].owner,
    unlinked: !links[i].tags.length && !links[i].assigned.length && !links[i].watching.length && !Object.keys(input.customfields ?? {}).length,
  }));
}

/** Links of new tickets (tags, assigned or watching operators): one INSERT for all. */
async function insertLinks(model: typeof TicketTagLink | typeof TicketAssignee | typeof TicketWatcher, column: 'tag_id' | 'user_id', links: Array<[number, number[]]>, transaction: Transaction): Promise<void> {
  const rows = links.flatMap(([ticketId, ids]) => ids.map((id) => ({ ticket_id: ticketId, [column]: id })));
  if (rows.length) await (model as any).bulkCreate(rows, { transaction });
}

/**
 * Applies an update. Cross-record rules that the update breaks (a department not of the brand, an
 * address not of the department, a ticket merged into another) are a 422 `There was an error
 * updating the ticket.`; unknown ids are `The selected <field> is invalid.`
 */
/** Who or what made a change, when it is not a request: the scheduler closing an inactive ticket. */
export interface UpdateContext {
  /** The moment of the change (UNIX seconds); now by default. */
  at?: number;
  cause?: TicketUpdateCause;
}

export async function updateTicket(ticket: Ticket, input: UpdateTicketInput, transaction: Transaction, context: UpdateContext = {}): Promise<void> {
  if (ticket.merged_into_id) throw updateFailed();
  const at = context.at ?? now();
  const settings = await cachedTicketSettings(transaction);
  const changes: string[] = [];
  const values: Partial<Ticket> = {};

  // Brand, department, department email: the result must hang together.
  if (input.brandId !== undefined) await assertExist(Brand, 'brand', input.brandId, transaction);
  if (input.departmentId !== undefined) await assertExist(Department, 'department', input.departmentId, transaction);
  if (input.departmentEmailId) await assertExist(DepartmentEmail, 'department_email', input.departmentEmailId, transaction);
  const brandId = input.brandId ?? ticket.brand_id;
  const departmentId = input.departmentId ?? ticket.department_id;
  if ((brandId !== ticket.brand_id || departmentId !== ticket.department_id) && !(await departmentInBrand(departmentId, brandId, transaction))) throw updateFailed();
  let departmentEmailId = ticket.department_email_id;
  if (input.departmentEmailId !== undefined) {
    departmentEmailId = input.departmentEmailId || null;
    if (departmentEmailId && !(await emailOfDepartment(departmentEmailId, departmentId, brandId, transaction))) throw updateFailed();
  } else if (brandId !== ticket.brand_id || departmentId !== ticket.department_id) {
    // The address the ticket had belongs to its old department or brand: the new one's default.
    if (!departmentEmailId || !(await emailOfDepartment(departmentEmailId, departmentId, brandId, transaction))) {
      departmentEmailId = await defaultDepartmentEmail(departmentId, brandId, transaction);
    }
  }
  if (brandId !== ticket.brand_id) { values.brand_id = brandId; changes.push('brand'); }
  if (departmentId !== ticket.department_id) { values.department_id = departmentId; changes.push('department'); }
  if (departmentEmailId !== ticket.department_email_id) { values.department_email_id = departmentEmailId; changes.push('department_email'); }

  const ownerAttributes = ['id', 'type', 'brand_id', 'email'];
  let newOwner: User | null = null;
  if (input.userId !== undefined && input.userId !== ticket.user_id) {
    const wanted = ticket.internal ? { type: 'operator' } : { type: 'user', brand_id: brandId };
    newOwner = await User.findOne({ attributes: ownerAttributes, where: { id: input.userId, ...wanted }, transaction });
    if (!newOwner) throw invalid('user');
    values.user_id = input.userId;
    // The token is the former user's key to the ticket (the link of every mail they had): the new
    // user's conversation gets a new one, which their mail from now on carries.
    values.token = newTicketToken();
    changes.push('user');
  }
  // The user the ticket has after the update, read when something depends on it: a brand change
  // without a new user must keep a user of the new brand (a customer of another brand would get
  // its mail with the new brand's sender, signature and links: 422 as for a department of another
  // brand; an internal ticket's operator has no brand), and the CC list never holds the user.
  const keepsUserIntoBrand = brandId !== ticket.brand_id && !ticket.internal && values.user_id === undefined;
  const owner = newOwner ?? (keepsUserIntoBrand || input.cc !== undefined
    ? await User.findByPk(ticket.user_id, { attributes: ownerAttributes, transaction })
    : null);
  if (keepsUserIntoBrand && (owner?.type !== 'user' || owner.brand_id !== brandId)) throw updateFailed();
  if (input.subject !== undefined && input.subject !== ticket.subject) { values.subject = input.subject; changes.push('subject'); }

  let statusId = ticket.status_id;
  if (input.statusId !== undefined) {
    await assertExist(TicketStatus, 'status', input.statusId, transaction);
    statusId = input.statusId;
  }
  if (input.locked !== undefined && (input.locked ? 1 : 0) !== ticket.locked) {
    values.locked = input.locked ? 1 : 0;
    changes.push('locked');
  }
  if (input.locked) {
    // Locking closes the ticket: a status that is not the resolved one cannot come with it.
    const resolved = settings.defaultResolvedStatus;
    if (resolved === null || (input.statusId !== undefined && input.statusId !== resolved)) throw updateFailed();
    statusId = resolved;
  } else if (ticket.locked && input.locked === undefined && statusId !== ticket.status_id && statusId !== settings.defaultResolvedStatus) {
    // A locked ticket stays closed: reopening it takes `locked` 0 with the status.
    throw updateFailed();
  }
  if (statusId !== ticket.status_id) {
    Object.assign(values, statusValues(ticket, statusId, settings, at));
    changes.push('status');
  }

  let priorityId = ticket.priority_id;
  if (input.priorityId !== undefined && input.priorityId !== ticket.priority_id) {
    await assertExist(TicketPriority, 'priority', input.priorityId, transaction);
    priorityId = input.priorityId;
    values.priority_id = priorityId;
    changes.push('priority');
  }
  // The priority must be offered in the (new) department, as on opening. A move to a department
  // that does not offer the current one is refused on `priority`: the client sends one with it.
  if ((priorityId !== ticket.priority_id || departmentId !== ticket.department_id) && !(await priorityOffered(priorityId, departmentId, transaction))) {
    throw invalid('priority');
  }

  // SLA: a plan (re)computes both due times from the ticket's creation; explicit times win.
  let due: DueTimes = { reply_due_time: ticket.reply_due_time, resolve_due_time: ticket.resolve_due_time };
  let planId = ticket.sla_plan_id;
  if (input.slaPlanId !== undefined) {
    planId = input.slaPlanId || null;
    if (planId && planId !== ticket.sla_plan_id) await assertExist(SlaPlan, 'sla_plan', planId, transaction, { enabled: 1 });
    if (planId !== ticket.sla_plan_id) { values.sla_plan_id = planId; changes.push('sla_plan'); }
  }
  if (input.slaPlanId !== undefined || (planId && priorityId !== ticket.priority_id)) {
    // A copy: explicit times are set on it below.
    due = planId ? await slaDueTimes(planId, priorityId, ticket.created_at, settings.defaultTimezone, transaction) : { ...NO_DUE_TIMES };
  }
  if (input.replyDueTime !== undefined) due.reply_due_time = input.replyDueTime || null;
  if (input.resolveDueTime !== undefined) due.resolve_due_time = input.resolveDueTime || null;
  const resolvedTime = values.resolved_time !== undefined ? values.resolved_time : ticket.resolved_time;
  const dueTime = resolvedTime ? null : currentDueTime({ first_reply_time: ticket.first_reply_time, ...due });
  if (due.reply_due_time !== ticket.reply_due_time || due.resolve_due_time !== ticket.resolve_due_time || dueTime !== ticket.due_time) {
    Object.assign(values, due, { due_time: dueTime });
    changes.push('due_time');
  }

  // A new CC list, or a new user who was on the old one: without the ticket's user.
  if (input.cc !== undefined || values.user_id !== undefined) {
    const cc = ccWithoutUser(input.cc ?? jsonList(ticket.cc), await addressesOf(owner, transaction));
    if (JSON.stringify(cc) !== JSON.stringify(jsonList(ticket.cc))) { values.cc = cc.length ? JSON.stringify(cc) : null; changes.push('cc'); }
  }
  // The ids of the links, checked before anything is read for the audit or written.
  await assertExist(TicketTag, 'tag', input.tagIds, transaction);
  await assertOperators('assignedto', input.assignedTo, transaction);
  await assertOperators('watching', input.watching, transaction);
  const linked = [...new Set(input.link ?? [])].filter((id) => id !== ticket.id);
  if (input.link?.length) {
    await assertExist(Ticket, 'link', input.link, transaction, { merged_into_id: null });
    if (linked.length !== new Set(input.link).size) throw invalid(`link.${input.link.indexOf(ticket.id)}`);
  }

  // The audit's "before", once the update is known to apply: a refused update reads nothing for it.
  const before = await auditSnapshot(ticket.id, transaction);
  // As `update` sets them: a value left undefined is no change.
  ticket.set(Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined)));
  await saveChanges(ticket, transaction);

  const links = { ticket_id: ticket.id };
  if (input.tagIds !== undefined && await setLinks(TicketTagLink, links, 'tag_id', input.tagIds, transaction)) changes.push('tag');
  let newlyAssigned: number[] = [];
  if (input.assignedTo !== undefined) {
    const before = await setLinks(TicketAssignee, links, 'user_id', input.assignedTo, transaction);
    if (before) {
      newlyAssigned = [...new Set(input.assignedTo)].filter((id) => !before.includes(id));
      changes.push('assignedto');
    }
  }
  if (input.watching !== undefined && await setLinks(TicketWatcher, links, 'user_id', input.watching, transaction)) changes.push('watching');
  // Links are written both ways, so the ticket's own rows say which of those named exist: a link
  // already there, or an unlink of one that is not, changes nothing (and writes nothing).
  const unlink = [...new Set(input.unlink ?? [])];
  const named = [...new Set([...linked, ...unlink])];
  const known = named.length
    ? new Set((await TicketLink.findAll({ attributes: ['linked_ticket_id'], where: { ticket_id: ticket.id, linked_ticket_id: { [Op.in]: named } }, transaction, lock: transaction.LOCK.UPDATE })).map((l) => l.linked_ticket_id))
    : new Set<number>();
  const newLinks = linked.filter((id) => !known.has(id));
  if (newLinks.length) {
    const rows = newLinks.flatMap((id) => [{ ticket_id: ticket.id, linked_ticket_id: id }, { ticket_id: id, linked_ticket_id: ticket.id }]);
    await TicketLink.bulkCreate(rows, { transaction, ignoreDuplicates: true });
    changes.push('link');
  }
  const ids = unlink.filter((id) => known.has(id));
  if (ids.length) {
    await TicketLink.destroy({
      where: { [Op.or]: [{ ticket_id: ticket.id, linked_ticket_id: { [Op.in]: ids } }, { ticket_id: { [Op.in]: ids }, linked_ticket_id: ticket.id }] }, transaction,
    });
    changes.push('unlink');
  }
  if (input.customfields !== undefined && input.customfields !== null && await applyCustomFieldValues('ticket', ticket.id, input.customfields, {
    brandId, departmentId, creating: false, overwriteLocked: input.overwriteCustomfieldValues === true, transaction,
  })) changes.push('customfield');
  if (!changes.length) return;
  const audit = await recordAudit(ticket.id, 'updated', diff(before, await auditSnapshot(ticket.id, transaction)), transaction);
  await emit(transaction, 'ticket.updated', { ticketId: ticket.id, changes, newlyAssigned, ...(context.cause ? { cause: context.cause } : {}), audit });
}

/**
 * Moves the ticket to the trash (`deleted_at`); a ticket already there stays as it is. A ticket
 * merged into another is read-only and in no list: its target is what goes to the trash.
 */
export async function trashTicket(ticket: Ticket, transaction: Transaction): Promise<void> {
  if (ticket.deleted_at) return;
  if (ticket.merged_into_id) throw new ValidationError('A ticket merged into another cannot be moved to the trash: trash the ticket it was merged into.');
  ticket.set('deleted_at', now());
  await saveChanges(ticket, transaction);
  const audit = await recordAudit(ticket.id, 'trashed', { deleted_at: { before: null, after: ticket.deleted_at } }, transaction);
  await emit(transaction, 'ticket.trashed', { ticketId: ticket.id, audit });
}

/** Takes the ticket out of the trash, as it was; a ticket not in the trash stays as it is. */
export async function restoreTicket(ticket: Ticket, transaction: Transaction): Promise<Ticket> {
  if (!ticket.deleted_at) return ticket;
  const trashedAt = ticket.deleted_at;
  ticket.set({ deleted_at: null, updated_at: now() });
  await saveChanges(ticket, transaction);
  const audit = await recordAudit(ticket.id, 'restored', { deleted_at: { before: trashedAt, after: null } }, transaction);
  await emit(transaction, 'ticket.restored', { ticketId: ticket.id, audit });
  return ticket;
}

/**
 * Merges tickets into `target` (locked by the caller): their messages and attachments move to it
 * (each message keeps the ticket it was written on, `original_ticket_id`, and the one it came
 * from is kept in `ticket_message_merges`, so a merge can be undone),
 * their tags, assigned operators, watchers and CC addresses join the target's, and so do their
 * users' addresses (the target's own user excepted). The sources stay,
 * hidden from lists, with `merged` 1 and `merged_into_id`: their numbers still lead to the target,
 * and so do tickets merged into them before, and so do their links to other tickets (the links
 * between the target and its sources go). The target gets `merged` 1. A source that does not
 * exist, is the target, is in the trash, was merged already, is of another brand, or is internal
 * where the target is not (or the other way round: an internal ticket's notes are the
 * operators', a customer's conversation is the customer's): `The selected ids.<n> is invalid.`
 */
export async function mergeTickets(target: Ticket, ids: number[], transaction: Transaction): Promise<Ticket> {
  if (target.merged_into_id || target.deleted_at) throw updateFailed();
  const sources = await Ticket.findAll({ where: { id: { [Op.in]: ids } }, order: [['id', 'ASC']], transaction, lock: transaction.LOCK.UPDATE });
  const byId = new Map(sources.map((s) => [s.id, s]));
  ids.forEach((id, n) => {
    const s = byId.get(id);
    if (!s || s.id === target.id || s.deleted_at || s.merged_into_id || s.brand_id !== target.brand_id || s.internal !== target.internal) throw invalid(`ids.${n}`);
  });
  const sourceIds = [...new Set(ids)];
  const before = await auditSnapshot(target.id, transaction);
  const q = (sql: string) => sequelize().query(sql, { replacements: { target: target.id, ids: sourceIds, now: now() }, transaction, type: QueryTypes.UPDATE });
  // Each message's ticket before its first merge (migration 098), for a merge undone.
  await q(`INSERT INTO ticket_message_merges (message_id, from_ticket_id) SELECT id, ticket_id FROM ticket_messages WHERE ticket_id IN (:ids)
    ON DUPLICATE KEY UPDATE message_id = message_id`);
  const at = now();
  // The sources, and the tickets merged into them before, are merged into the target with their
  // messages: the target's text in the search index is written once for all of them.
  await movingMessages(transaction, [target.id, ...sourceIds], async () => {
    // updated_at: the messages changed ticket (the export sends them again).
    await q('UPDATE ticket_messages SET original_ticket_id = IFNULL(original_ticket_id, ticket_id), ticket_id = :target, updated_at = :now WHERE ticket_id IN (:ids)');
    await q('UPDATE tickets SET merged_into_id = :target, updated_at = :now WHERE merged_into_id IN (:ids)');
    await Ticket.update({ merged: 1, merged_into_id: target.id, updated_at: at }, { where: { id: { [Op.in]: sourceIds } }, transaction });
  });
  await q('UPDATE ticket_attachments SET ticket_id = :target WHERE ticket_id IN (:ids)');
  for (const [table, column] of [['ticket_tag_links', 'tag_id'], ['ticket_assignees', 'user_id'], ['ticket_watchers', 'user_id']]) {
    await q(`INSERT IGNORE INTO ${table} (ticket_id, ${column}) SELECT :target, ${column} FROM ${table} WHERE ticket_id IN (:ids)`);
  }
  // Links, both ways: a source's links to other tickets become the target's; none is left to a source.
  await q(`INSERT IGNORE INTO ticket_links (ticket_id, linked_ticket_id)
    SELECT :target, linked_ticket_id FROM ticket_links WHERE ticket_id IN (:ids) AND linked_ticket_id NOT IN (:ids) AND linked_ticket_id <> :target
    UNION SELECT linked_ticket_id, :target FROM ticket_links WHERE ticket_id IN (:ids) AND linked_ticket_id NOT IN (:ids) AND linked_ticket_id <> :target`);
  await q('DELETE FROM ticket_links WHERE ticket_id IN (:ids)');
  await q('DELETE FROM ticket_links WHERE linked_ticket_id IN (:ids)');
  // The sources' customers join the target's CC list (as Zendesk does): it is their conversation
  // too, and a CC'd user of the brand may write on it and gets its mail. An internal source's
  // operator does not; the target's own user is never on its list.
  const people = await User.findAll({
    attributes: ['id', 'type', 'email'], where: { id: { [Op.in]: [...new Set([target.user_id, ...sources.map((s) => s.user_id)])] } }, transaction,
  });
  const customers = people.filter((p) => p.type === 'user' && p.id !== target.user_id).map((p) => p.email);
  const own = await addressesOf(people.find((p) => p.id === target.user_id), transaction);
  const cc = ccWithoutUser([...jsonList(target.cc), ...sources.flatMap((s) => jsonList(s.cc)), ...customers], own);
  const lastReply = Math.max(target.last_reply_time ?? 0, ...sources.map((s) => s.last_reply_time ?? 0));
  // The sources' operator replies are the target's now: its first reply is the earliest of them
  // all, and once it has one its SLA's resolution deadline applies rather than the reply's.
  const firstReplies = [target, ...sources].map((t) => t.first_reply_time).filter((t): t is number => t !== null);
  const firstReply = firstReplies.length ? Math.min(...firstReplies) : null;
  const dueTime = target.resolved_time ? null : currentDueTime({ first_reply_time: firstReply, reply_due_time: target.reply_due_time, resolve_due_time: target.resolve_due_time });
  target.set({
    merged: 1, cc: cc.length ? JSON.stringify(cc) : null, last_reply_time: lastReply || null, first_reply_time: firstReply, due_time: dueTime, updated_at: at,
  });
  await saveChanges(target, transaction);
  const merged = diff(before, await auditSnapshot(target.id, transaction));
  // The target's entry lists its sources; each source's own history says where it went. One statement.
  const [audit] = await recordAudits([
    { ticketId: target.id, action: 'merged', changes: { ...merged, merged_ids: { before: null, after: sourceIds } } },
    ...sources.map((source) => ({
      ticketId: source.id, action: 'merged_into' as const,
      // `merged` only where it changed: a source that was a merge target itself had it already.
      changes: { ...(source.merged ? {} : { merged: { before: 0, after: 1 } }), merged_into_id: { before: null, after: target.id } },
    })),
  ], transaction);
  await emit(transaction, 'ticket.merged', { ticketId: target.id, mergedIds: sourceIds, audit });
  return target;
}
