import type { Transaction } from 'sequelize';
import { beforePersonDeleted } from '../../export/tombstones';
import { emit, emitAll } from '../../events';
import { personLeaving } from '../users/service';
import { deletePrivateResponsesOf } from '../../ticket/privateResponses';
import { deletePrivateFiltersOf } from '../../ticket/filterUse';
import { Department, OperatorDepartment, Ticket, User } from '../../db/models';
import { setLinks } from '../../db/links';
import { ScopeRequiredError, ValidationError } from '../../errors';
import { select } from '../../db/select';
import { assertExist } from '../../db/exists';
import { writeCount } from '../../db/writes';
import { sent } from '../../lib/serialize';
import { readSettings } from '../../db/settings';
import {
  assertEmailFree, assertLanguage, normalisePhones, passwordValues, replaceGroups, replacePhones,
} from '../people/rules';
import { revokeVerificationTokens, revokesVerification } from '../verification';

/**
 * What an operator is made of, as the service takes it (validated by the resource's schemas, or
 * built by other code with no HTTP body). Absent fields are left as they are on update.
 */
export interface OperatorInput {
  firstname?: string;
  lastname?: string;
  email?: string;
  password?: string;
  /** 1: send the verification mail (only to an active operator without a password). */
  send_email?: 0 | 1;
  /** null (an empty value): none. */
  phone?: string[] | null;
  country?: string | null;
  language_code?: string | null;
  timezone?: string | null;
  active?: 0 | 1;
  /** Operator group ids (at least one; null, an empty value: refused). */
  groups?: number[] | null;
  /** Departments besides those of the groups (null, an empty value: none). */
  depts?: number[] | null;
}

export type CreateOperatorInput = OperatorInput & { firstname: string; lastname: string; email: string };

/** An operator is in at least one group: `groups` sent empty is refused as a missing one is. */
function groupsOf(input: OperatorInput): number[] | undefined {
  if (input.groups === null) throw new ValidationError('The groups field is required.');
  return input.groups;
}

/** Input fields stored as they are. */
const COLUMNS = ['firstname', 'lastname', 'email', 'country', 'language_code', 'timezone', 'active'] as const;

/** Departments an operator handles besides those of the operator's groups. */
async function replaceDepartments(userId: number, deptIds: number[], transaction: Transaction, fresh = false) {
  await assertExist(Department, 'depts', deptIds, transaction);
  await setLinks(OperatorDepartment, { user_id: userId }, 'department_id', deptIds, transaction, { fresh });
}

export async function createOperator(input: CreateOperatorInput, transaction: Transaction): Promise<User> {
  const groups = groupsOf(input)!;
  const phones = normalisePhones(input.phone);
  await assertEmailFree('operator', input.email, null, null, transaction);
  await assertLanguage(input.language_code, transaction);
  const core = await readSettings('core', transaction);
  const operator = await User.create({
    type: 'operator', brand_id: null, ...sent(input, COLUMNS),
    language_code: input.language_code || core.default_operator_language || 'en',
    timezone: input.timezone || core.default_timezone || 'UTC',
    ...(await passwordValues(input.password)),
  }, { transaction });
  await replaceGroups(operator.id, 'operator', groups, transaction, true);
  if (phones) await replacePhones(operator.id, phones, transaction, true);
  if (input.depts?.length) await replaceDepartments(operator.id, input.depts, transaction, true);
  await emit(transaction, 'operator.created', { userId: operator.id, sendEmail: input.send_email === 1 });
  return operator;
}

/** `writesBefore`: the transaction's writeCount before the update began (the event is emitted only when it wrote something). */
export async function updateOperator(operator: User, input: OperatorInput, transaction: Transaction, writesBefore = writeCount(transaction)): Promise<void> {
  const groups = groupsOf(input);
  const phones = normalisePhones(input.phone);
  if (input.email !== undefined && input.email !== operator.email) await assertEmailFree('operator', input.email, null, operator.id, transaction);
  await assertLanguage(input.language_code, transaction);
  if (revokesVerification(operator, input)) await revokeVerificationTokens(operator.id, transaction);
  await operator.update({ ...sent(input, COLUMNS), ...(await passwordValues(input.password)) }, { transaction });
  if (groups) await replaceGroups(operator.id, 'operator', groups, transaction);
  if (phones) await replacePhones(operator.id, phones, transaction);
  if (input.depts !== undefined) await replaceDepartments(operator.id, input.depts ?? [], transaction);
  // A verification mail asked for is sent through the event, even when nothing else changed.
  if (writeCount(transaction) > writesBefore || input.send_email === 1) {
    await emit(transaction, 'operator.updated', { userId: operator.id, sendEmail: input.send_email === 1 });
  }
}

/**
 * Whether deleting the operator changes the ticket area: tickets they are assigned to or watch
 * (audited as the token), their private canned responses and filters (deleted with them), a
 * department's default assignee (cleared).
 */
async function inTicketArea(operatorId: number, transaction: Transaction): Promise<boolean> {
  const [{ found }] = await select<{ found: number }>(
    `SELECT EXISTS (SELECT 1 FROM ticket_assignees WHERE user_id = :id) OR EXISTS (SELECT 1 FROM ticket_watchers WHERE user_id = :id)
      OR EXISTS (SELECT 1 FROM canned_responses WHERE user_id = :id) OR EXISTS (SELECT 1 FROM ticket_filters WHERE user_id = :id)
      OR EXISTS (SELECT 1 FROM departments WHERE default_assignedto = :id) AS found`,
    { id: operatorId }, { transaction },
  );
  return Number(found) === 1;
}

/**
 * An operator who opened internal tickets is not deleted: the tickets (with every operator's notes
 * in them) would go with them, and the spec removes tickets permanently only in the operator
 * interface. Trashed ones count too, as they can be restored. Their replies and notes elsewhere
 * stay, without author (the foreign key sets it null). `grants`: the request token's scopes beyond
 * its path's (absent: full access); a delete that changes the ticket area (inTicketArea) needs
 * `ticket:write` too, as a user's with tickets does.
 */
export async function deleteOperator(operator: User, transaction: Transaction, grants?: (scope: string) => boolean): Promise<void> {
  if (await Ticket.findOne({ attributes: ['id'], where: { user_id: operator.id }, transaction, lock: transaction.LOCK.SHARE })) {
    throw new ValidationError('The operator cannot be deleted because they opened internal tickets: give them to another operator first.');
  }
  if (grants && !grants('ticket:write') && await inTicketArea(operator.id, transaction)) throw new ScopeRequiredError('ticket:write');
  await beforePersonDeleted(operator.id, false, transaction);
  const linked = await personLeaving(operator.id, transaction);
  await deletePrivateResponsesOf(operator.id, transaction);
  await deletePrivateFiltersOf(operator.id, transaction);
  await operator.destroy({ transaction });
  await emitAll(transaction, [...linked, { name: 'operator.deleted', payload: { userId: operator.id } }]);
}
