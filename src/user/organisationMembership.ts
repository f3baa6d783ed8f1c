import { Op, type Transaction } from 'sequelize';
import { Organisation, User } from '../db/models';
import { onceInTransaction } from '../db/transaction';
import { select } from '../db/select';
import { ValidationError, invalid } from '../errors';
import { emit, emitAll } from '../events';

export const MANAGER = 0;
export const MEMBER = 1;

/** The organisation a user may join: it exists and belongs to the user's brand. */
export async function organisationForBrand(orgId: number, brandId: number | null, field: string, transaction: Transaction): Promise<Organisation> {
  const org = await Organisation.findByPk(orgId, { transaction });
  if (!org || org.brand_id !== brandId) throw invalid(field);
  return org;
}

/**
 * Users moving to organisation `orgId` (null: to none) stop owning the one they leave: an owner
 * is always a member, whichever way they leave (their own update, another organisation's
 * `access_level`). Each organisation left without owner is an `organisation.updated`. Called
 * before the move; the callers hold the users' rows.
 */
export async function releaseOwnership(userIds: number[], orgId: number | null, transaction: Transaction): Promise<void> {
  if (!userIds.length) return;
  const owned = await Organisation.findAll({
    attributes: ['id'], where: { owner_id: { [Op.in]: userIds }, ...(orgId ? { id: { [Op.ne]: orgId } } : {}) }, transaction,
  });
  if (!owned.length) return;
  // By primary key: no gap lock on owner_id for the users who own nothing.
  await Organisation.update({ owner_id: null }, { where: { id: { [Op.in]: owned.map((o) => o.id) } }, transaction });
  await emitAll(transaction, owned.map((o) => ({ name: 'organisation.updated' as const, payload: { organisationId: o.id } })));
}

/** A new organisation with the user as owner and Manager (unless another level is asked for). */
export async function createOwnedOrganisation(user: User, name: string, level: number | undefined, transaction: Transaction): Promise<void> {
  const org = await Organisation.create({
    brand_id: user.brand_id, owner_id: user.id, name, country: user.country, language_code: user.language_code, timezone: user.timezone,
  }, { transaction });
  await user.update({ organisation_id: org.id, organisation_access_level: level ?? MANAGER }, { transaction });
  await emit(transaction, 'organisation.created', { organisationId: org.id });
}

/** The organisation of the brand that claims the domain of `email`, if any (users of that domain join it). */
export async function organisationByDomain(email: string, brandId: number, transaction: Transaction): Promise<number | null> {
  const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase();
  // Senders of a batch of mails share domains: each domain read once per transaction.
  const claim = await onceInTransaction(transaction, `organisation.domain:${brandId}:${domain}`,
    async () => (await select<{ organisation_id: number }>('SELECT organisation_id FROM organisation_domains WHERE domain = ? AND brand_id = ? LIMIT 1', [domain, brandId], { transaction }))[0]);
  return claim?.organisation_id ?? null;
}

export interface MembershipInput {
  organisation?: string | null;
  organisation_id?: number;
  organisation_access_level?: number;
}

/**
 * Applies the membership fields of a user create or update:
 * - `organisation` creates a new organisation owned by the user (on update, renames the user's
 *   organisation, which only its owner may do);
 * - `organisation_id` joins an existing organisation of the brand (default level User), and 0 on
 *   update leaves the current one;
 * - `organisation_access_level` alone changes the level within the current organisation.
 */
export async function applyMembership(user: User, input: MembershipInput, creating: boolean, transaction: Transaction): Promise<void> {
  const { organisation: name, organisation_id: orgId, organisation_access_level: level } = input;
  if (name && orgId !== undefined && orgId !== 0) {
    throw new ValidationError('The organisation and organisation id fields cannot be used together.');
  }
  if (orgId === 0) {
    if (creating) throw invalid('organisation_id');
    await releaseOwnership([user.id], null, transaction);
    await user.update({ organisation_id: null, organisation_access_level: null }, { transaction });
    if (name) await createOwnedOrganisation(user, name, level, transaction);
    return;
  }
  if (orgId !== undefined) {
    await organisationForBrand(orgId, user.brand_id, 'organisation_id', transaction);
    const same = user.organisation_id === orgId;
    if (!creating && !same) await releaseOwnership([user.id], orgId, transaction);
    await user.update({ organisation_id: orgId, organisation_access_level: level ?? (same ? user.organisation_access_level : MEMBER) }, { transaction });
    return;
  }
  if (name) {
    if (!creating && user.organisation_id) {
      const current = await Organisation.findByPk(user.organisation_id, { transaction });
      if (current && current.owner_id !== user.id) throw new ValidationError('The organisation can only be renamed by its owner.');
      if (current) {
        if (current.name !== name) {
          await current.update({ name }, { transaction });
          await emit(transaction, 'organisation.updated', { organisationId: current.id });
        }
        if (level !== undefined) await user.update({ organisation_access_level: level }, { transaction });
        return;
      }
    }
    await createOwnedOrganisation(user, name, level, transaction);
    return;
  }
  if (level !== undefined) {
    if (!user.organisation_id) throw new ValidationError('The organisation access level can only be set for a user in an organisation.');
    await user.update({ organisation_access_level: level }, { transaction });
    return;
  }
  if (creating && user.brand_id) {
    const byDomain = await organisationByDomain(user.email, user.brand_id, transaction);
    if (byDomain) await user.update({ organisation_id: byDomain, organisation_access_level: MEMBER }, { transaction });
  }
}
