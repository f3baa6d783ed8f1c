import type { Transaction } from 'sequelize';
import { beforePersonDeleted } from '../../export/tombstones';
import { emit, emitAll, type Emitted } from '../../events';
import { auditLinksRemoved } from '../../ticket/cascadeAudit';
import { Ticket, TicketAssignee, User, UserEmail } from '../../db/models';
import { emailScope } from '../../db/models/PersonEmail';
import { writeCount } from '../../db/writes';
import { setLinks } from '../../db/links';
import { ScopeRequiredError, ValidationError, invalid } from '../../errors';
import { definitions } from '../../db/definitions';
import { onceInTransaction } from '../../db/transaction';
import { insertRows } from '../../db/insertRows';
import { execute, select } from '../../db/select';
import { BY_MERGE_TARGET } from '../../db/ticketIndexes';
import { now } from '../../db/entity';
import { recordAudits } from '../../ticket/tickets/audit';
import { deleteTicketsForGood } from '../../ticket/tickets/deleteForGood';
import { movingMessages } from '../../ticket/tickets/search/engine';
import { sent } from '../../lib/serialize';
import { BRAND_EMAIL_TAKEN } from '../../db/uniqueKeys';
import { applyCustomFieldValues, deleteCustomFieldValues } from '../../customfields/values';
import { applyMembership } from '../organisationMembership';
import { revokeVerificationTokens, revokesVerification } from '../verification';
import {
  assertLanguage, normalisePhones, passwordValues, personDefaults, replaceGroups, replacePhones, takenEmails,
} from '../people/rules';

/**
 * What a user is made of, as the service takes it: validated by the resource's schemas, or built
 * by other code (the mailbox worker opening a ticket for a new sender) with no HTTP body.
 * Absent fields are left as they are on update.
 */
export interface UserInput {
  email?: string;
  /** The default brand when absent on create. */
  brand_id?: number;
  firstname?: string | null;
  lastname?: string | null;
  /** null (an empty value): none. */
  additional_email?: string[] | null;
  password?: string;
  /** 1: send the verification mail (only to a user without a password). */
  send_email?: 0 | 1;
  /** null (an empty value): none. */
  phone?: string[] | null;
  country?: string | null;
  language_code?: string | null;
  timezone?: string | null;
  email_verified?: 0 | 1;
  active?: 0 | 1;
  /** A new organisation of that name (owned by the user), or on update a rename by its owner. */
  organisation?: string | null;
  /** An existing organisation; 0 on update leaves the current one. */
  organisation_id?: number;
  organisation_access_level?: 0 | 1;
  organisation_notifications?: 0 | 1;
  /** Values keyed by custom field id. */
  customfield?: Record<string, unknown>;
  /** null (an empty value): none. */
  groups?: number[] | null;
  /** Update only: locked custom fields change only when 1. */
  overwrite_customfield_values?: 0 | 1;
}

export type CreateUserInput = UserInput & { email: string };

/** The brand of records created without one: the first enabled brand. */
export async function defaultBrandId(transaction?: Transaction): Promise<number> {
  const brands = await brandList(transaction);
  const brand = brands.find((b) => Number(b.enabled) === 1) ?? brands[0];
  if (!brand) throw new Error('No brand exists: run the seed');
  return brand.id;
}

/**
 * Every brand's id and whether it is enabled, in id order: kept per process (db/definitions), and
 * read once per transaction when the kept list is stale (a mailbox batch creating 30 users read it
 * 30 times once a slow batch outlived the kept entry).
 */
const brandList = (transaction?: Transaction) => {
  const read = () => definitions.get('brands', (t) => select<{ id: number; enabled: number }>('SELECT id, enabled FROM brands ORDER BY id', [], { transaction: t }), transaction);
  return transaction ? onceInTransaction(transaction, 'brands', read) : read();
};

/** `The selected brand id is invalid.` unless the brand exists (none given: nothing to check). */
async function assertBrand(brandId: number | null, transaction: Transaction): Promise<void> {
  if (brandId !== null && !(await brandList(transaction)).some((b) => b.id === brandId)) throw invalid('brand_id');
}

/** The addresses a user will hold, and which of them the request sent. */
interface UserAddresses {
  email: string;
  emailSent: boolean;
  /** The additional addresses as sent (numbered as sent), or the user's others when none were sent. */
  additional: string[];
  additionalSent: boolean;
}

/**
 * One account per email per brand, counting additional emails: the 422 names the field that sent a
 * taken address (a user moved to another brand sent none: then the brand is refused). The unique
 * key of person_emails (kept by triggers) decides races; errors.ts words its refusal the same way.
 */
async function assertAddressesFree(brandId: number, a: UserAddresses, userId: number | null, transaction: Transaction) {
  const clash = a.additionalSent ? a.additional.indexOf(a.email) : -1;
  if (clash >= 0) throw new ValidationError(`The additional email.${clash} must be different from the email.`);
  const taken = await takenEmails(emailScope('user', brandId), [a.email, ...a.additional], userId, transaction);
  if (!taken.size) return;
  if (a.emailSent && taken.has(a.email)) throw new ValidationError('The email has already been taken.');
  const i = a.additional.findIndex((e) => taken.has(e));
  if (a.additionalSent && i >= 0) throw new ValidationError(`The additional email.${i} has already been taken.`);
  throw new ValidationError(BRAND_EMAIL_TAKEN);
}

/** Writes additional emails of users, one statement (the triggers claim them for each user's brand). */
async function addAdditionalEmails(emails: Array<{ userId: number; email: string }>, transaction: Transaction) {
  const unique = [...new Map(emails.map((e) => [`${e.userId} ${e.email}`, e])).values()];
  if (unique.length) await UserEmail.bulkCreate(unique.map((e) => ({ user_id: e.userId, email: e.email })), { transaction });
}

function checkVerifiedNeedsPassword(emailVerified: number | undefined, hasPassword: boolean) {
  if (emailVerified === 1 && !hasPassword) throw new ValidationError('The password field is required when email verified is 1.');
}

/** Input fields stored as they are. */
const COLUMNS = ['firstname', 'lastname', 'email', 'country', 'language_code', 'timezone', 'email_verified', 'active', 'organisation_notifications'] as const;

/**
 * `addressFree`: the caller has just found nobody of the brand with the address (no additional ones given).
 * `implicit`: the help desk creates the user itself (a ticket's new `user_email`, a mail's new sender), not
 * through the user form: required custom fields it cannot know are not asked for.
 */
export interface CreateUsersOptions { addressFree?: boolean; implicit?: boolean }

export async function createUser(input: CreateUserInput, transaction: Transaction, known: CreateUsersOptions = {}): Promise<User> {
  return (await createUsers([input], transaction, known))[0];
}

/**
 * Creates users, in order: each input checked as createUser checks it (the first refusal is thrown,
 * before anything is written), then the users written in one INSERT (their additional addresses in
 * one more), then what each links to, and their `user.created` events. A batch of imported mails
 * creates its new senders so. `addressFree`: the caller has just found nobody of the brand with
 * any of the addresses, which are all different (no additional ones given). A user's address
 * taken meanwhile by another transaction fails the INSERT, which then leaves no user behind.
 */
export async function createUsers(inputs: CreateUserInput[], transaction: Transaction, known: CreateUsersOptions = {}): Promise<User[]> {
  const checked: Array<{ input: CreateUserInput; brandId: number; phones: ReturnType<typeof normalisePhones> }> = [];
  for (const input of inputs) {
    const brandId = input.brand_id ?? (await defaultBrandId(transaction));
    await assertBrand(brandId, transaction);
    const phones = normalisePhones(input.phone);
    checkVerifiedNeedsPassword(input.email_verified, !!input.password);
    const additional: string[] | undefined = input.additional_email ?? undefined;
    if (!known.addressFree || additional?.length) {
      await assertAddressesFree(brandId, { email: input.email, emailSent: true, additional: additional ?? [], additionalSent: !!additional }, null, transaction);
    }
    await assertLanguage(input.language_code, transaction);
    checked.push({ input, brandId, phones });
  }
  if (!checked.length) return [];
  const defaults = await personDefaults(transaction);
  const users = await insertRows(User, await Promise.all(checked.map(async ({ input, brandId }) => ({
    type: 'user', brand_id: brandId, ...sent(input, COLUMNS),
    language_code: input.language_code || defaults.language_code,
    timezone: input.timezone || defaults.timezone,
    ...(await passwordValues(input.password)),
  }))), transaction, { stored: true });
  await addAdditionalEmails(checked.flatMap(({ input }, i) => (input.additional_email ?? []).map((email) => ({ userId: users[i].id, email }))), transaction);
  for (const [i, { input, brandId, phones }] of checked.entries()) {
    const user = users[i];
    if (phones) await replacePhones(user.id, phones, transaction, true);
    if (input.groups?.length) await replaceGroups(user.id, 'user', input.groups, transaction, true);
    await applyMembership(user, input, true, transaction);
    await applyCustomFieldValues('user', user.id, input.customfield, { brandId, creating: true, implicit: known.implicit, overwriteLocked: true, transaction });
  }
  await emitAll(transaction, checked.map(({ input }, i) => ({ name: 'user.created' as const, payload: { userId: users[i].id, sendEmail: input.send_email === 1 } })));
  return users;
}

/** `writesBefore`: the transaction's writeCount before the update began (the event is emitted only when it wrote something). */
export async function updateUser(user: User, input: UserInput, transaction: Transaction, writesBefore = writeCount(transaction)): Promise<void> {
  const phones = normalisePhones(input.phone);
  checkVerifiedNeedsPassword(input.email_verified, !!(input.password ?? user.password));
  const brandId = input.brand_id ?? user.brand_id;
  if (brandId !== user.brand_id) {
    // Moving a user to another brand: organisations and custom field values are per brand.
    await assertBrand(brandId, transaction);
    const staysInOrganisation = user.organisation_id && input.organisation_id !== 0;
    if (staysInOrganisation) throw new ValidationError('The brand of a user in an organisation cannot be changed: remove the user from the organisation first (organisation_id 0).');
  }
  const email: string = input.email ?? user.email;
  // An empty value (null) clears the list, like an empty array.
  const additional: string[] | undefined = input.additional_email === undefined ? undefined : input.additional_email ?? [];
  if (email !== user.email || brandId !== user.brand_id || additional) {
    const others = additional ?? (await UserEmail.findAll({ where: { user_id: user.id }, attributes: ['email'], transaction }))
      .map((e) => e.email).filter((e) => e !== email);
    await assertAddressesFree(brandId!, { email, emailSent: input.email !== undefined, additional: others, additionalSent: !!additional }, user.id, transaction);
  }
  await assertLanguage(input.language_code, transaction);
  // An address is one of a user's emails once (per brand): additional ones being replaced go
  // before the main address or the brand changes (the main address may become one of them, and
  // the old ones would move to the new brand), and so does one that becomes the main address.
  // Otherwise the list is compared first (sent unchanged, nothing is written).
  const movingAddresses = email !== user.email || brandId !== user.brand_id;
  if (additional && movingAddresses) await UserEmail.destroy({ where: { user_id: user.id }, transaction });
  else if (email !== user.email) await UserEmail.destroy({ where: { user_id: user.id, email }, transaction });
  if (revokesVerification(user, input)) await revokeVerificationTokens(user.id, transaction);
  await user.update({ ...sent(input, COLUMNS), brand_id: brandId, ...(await passwordValues(input.password)) }, { transaction });
  if (additional) await setLinks(UserEmail, { user_id: user.id }, 'email', additional, transaction, { ordered: true, fresh: movingAddresses });
  if (phones) await replacePhones(user.id, phones, transaction);
  if (input.groups !== undefined) await replaceGroups(user.id, 'user', input.groups ?? [], transaction);
  await applyMembership(user, input, false, transaction);
  await applyCustomFieldValues('user', user.id, input.customfield, {
    brandId: user.brand_id!, creating: false, overwriteLocked: input.overwrite_customfield_values === 1, transaction,
  });
  // A verification mail asked for is sent through the event, even when nothing else changed.
  if (writeCount(transaction) > writesBefore || input.send_email === 1) {
    await emit(transaction, 'user.updated', { userId: user.id, sendEmail: input.send_email === 1 });
  }
}

/**
 * Other customers' tickets merged into the person's are given back before the person's tickets
 * go (a merge is reversible: the ticket each message came from is kept, `ticket_message_merges`):
 * each leaves the merge (`merged_into_id` cleared, `merged` 0, listed and counted again by the
 * triggers), its messages and their attachments return to it, its audit says so, and a
 * `ticket.updated` [merged] each is returned for the delete's emitAll. Deleting one customer
 * deleted the conversations of the others merged into theirs. Before beforePersonDeleted, which
 * then finds the person's own tickets and messages only.
 */
export async function unmergeOthersFrom(userId: number, transaction: Transaction): Promise<Emitted[]> {
  const others = await select<{ id: number; merged_into_id: number; merged: number }>(
    `SELECT s.id, s.merged_into_id, s.merged FROM tickets k STRAIGHT_JOIN tickets s ${BY_MERGE_TARGET} ON s.merged_into_id = k.id
      WHERE k.user_id = :userId AND s.user_id <> :userId ORDER BY s.id FOR UPDATE`,
    { userId }, { transaction },
  );
  if (!others.length) return [];
  // Each statement stamps its rows with the time it starts (as beforePersonDeleted does: the
  // export holds readers back at a change it sees uncommitted, not at one stamped earlier).
  const ids = others.map((o) => Number(o.id));
  const values = () => ({ userId, ids, at: now() });
  // Each message to the ticket it came from in its first merge (ticket_message_merges), its
  // original_ticket_id cleared where that is the same ticket (a message split into that ticket
  // from another before the merge keeps naming the one it was written on); a message merged
  // before migration 098 has no such row: to the ticket it was written on. Neither statement's
  // assignments read a column another assigns (a multiple-table UPDATE keeps no order).
  await movingMessages(transaction, [...ids, ...others.map((o) => Number(o.merged_into_id))], async () => {
    await execute(`UPDATE ticket_messages m JOIN ticket_message_merges g ON g.message_id = m.id
      SET m.ticket_id = g.from_ticket_id, m.original_ticket_id = IF(m.original_ticket_id = g.from_ticket_id, NULL, m.original_ticket_id), m.updated_at = :at
      WHERE g.from_ticket_id IN (:ids) AND m.ticket_id IN (SELECT id FROM tickets WHERE user_id = :userId)`, values(), transaction);
    await execute(`UPDATE ticket_messages SET ticket_id = original_ticket_id, original_ticket_id = NULL, updated_at = :at
      WHERE original_ticket_id IN (:ids) AND ticket_id IN (SELECT id FROM tickets WHERE user_id = :userId)
        AND NOT EXISTS (SELECT 1 FROM ticket_message_merges g WHERE g.message_id = ticket_messages.id)`, values(), transaction);
    // Out of the merge here too: the person's tickets' text in the search index is not written again for each.
    await execute('UPDATE tickets SET merged_into_id = NULL, merged = 0, updated_at = :at WHERE id IN (:ids)', values(), transaction);
  });
  await execute(`DELETE g FROM ticket_messages m JOIN ticket_message_merges g ON g.message_id = m.id
    WHERE m.ticket_id IN (:ids) AND g.from_ticket_id = m.ticket_id`, values(), transaction);
  await execute(`UPDATE ticket_attachments a JOIN ticket_messages m ON m.id = a.message_id SET a.ticket_id = m.ticket_id
    WHERE m.ticket_id IN (:ids) AND a.ticket_id <> m.ticket_id`, values(), transaction);
  const audits = await recordAudits(others.map((o) => ({
    ticketId: Number(o.id), action: 'updated' as const,
    changes: { merged_into_id: { before: Number(o.merged_into_id), after: null }, ...(o.merged ? { merged: { before: 1, after: 0 } } : {}) },
  })), transaction);
  return others.map((o, i) => ({ name: 'ticket.updated' as const, payload: { ticketId: Number(o.id), changes: ['merged'], newlyAssigned: [], audit: audits[i] } }));
}

/**
 * A person's tickets go with them, with their own tickets merged into them (others' were given
 * back: unmergeOthersFrom), by deleteTicketsForGood. Returns the ids of the tickets deleted, for
 * their events.
 */
export async function deleteTicketsOf(userId: number, transaction: Transaction): Promise<number[]> {
  const own = (await Ticket.findAll({ attributes: ['id'], where: { user_id: userId }, transaction, lock: transaction.LOCK.UPDATE })).map((t) => t.id);
  return deleteTicketsForGood(own, transaction);
}

/**
 * What a person's delete changes beyond their own records, done before it (after
 * beforePersonDeleted, which finds the tickets through the same rows):
 * - the tickets they are assigned to or watch lose them: an audit entry each and, in the
 *   background, a `ticket.updated` each (auditLinksRemoved);
 * - their assignments go by a statement rather than by the foreign key's cascade: the triggers on
 *   `ticket_assignees` then clear `tickets.assigned` (and move the list's counters) of the tickets
 *   left without an assignee (migration 025);
 * - the organisations they own or are in, and the articles they wrote, show them no more (the
 *   foreign keys clear or drop them): those records' events, returned for the delete's emitAll.
 */
export async function personLeaving(userId: number, transaction: Transaction): Promise<Emitted[]> {
  const linked = await select<{ k: 'organisation' | 'article'; id: number }>(
    `SELECT 'organisation' AS k, id FROM organisations WHERE owner_id = :userId
     UNION SELECT 'organisation', organisation_id FROM users WHERE id = :userId AND organisation_id IS NOT NULL
     UNION SELECT 'article', id FROM articles WHERE author_id = :userId
     ORDER BY k, id`,
    { userId }, { transaction },
  );
  await auditLinksRemoved('person', userId, transaction);
  await TicketAssignee.destroy({ where: { user_id: userId }, transaction });
  return linked.map(({ k, id }) => (k === 'organisation'
    ? { name: 'organisation.updated' as const, payload: { organisationId: Number(id) } }
    : { name: 'article.updated' as const, payload: { articleId: Number(id) } }));
}

/**
 * `grants`: the request token's scopes beyond its path's (absent: full access). The user's tickets
 * go for good, which the ticket API never does (it trashes): a user who has tickets (in the trash or
 * merged too) is deleted only by a token that may also write tickets.
 */
export async function deleteUser(user: User, transaction: Transaction, grants?: (scope: string) => boolean): Promise<void> {
  if (grants && !grants('ticket:write') && await Ticket.findOne({ attributes: ['id'], where: { user_id: user.id }, transaction, lock: transaction.LOCK.SHARE })) {
    throw new ScopeRequiredError('ticket:write');
  }
  const unmerged = await unmergeOthersFrom(user.id, transaction);
  await beforePersonDeleted(user.id, true, transaction);
  await deleteCustomFieldValues('user', user.id, transaction);
  const linked = await personLeaving(user.id, transaction);
  const tickets = await deleteTicketsOf(user.id, transaction);
  await user.destroy({ transaction });
  // The tickets that went with the user: a ticket.deleted each, all in one INSERT of the feed with
  // user.deleted (emitAll), as an organisation's delete emits its users' events.
  await emitAll(transaction, [
    ...unmerged,
    ...tickets.map((ticketId) => ({ name: 'ticket.deleted' as const, payload: { ticketId } })),
    ...linked,
    { name: 'user.deleted' as const, payload: { userId: user.id } },
  ]);
}
