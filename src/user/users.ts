import { Op, type Transaction } from 'sequelize';
import { Brand, User, UserEmail } from '../db/models';
import { ValidationError } from '../http/errors';
import { assertExist } from '../http/exists';
import { sent } from '../http/serialize';
import { applyCustomFieldValues, deleteCustomFieldValues } from './customFieldValues';
import { applyMembership } from './organisationMembership';
import {
  assertEmailFree, assertLanguage, maybeSendVerification, normalisePhones, passwordValues, personDefaults, replaceGroups, replacePhones,
} from './people';

/** The brand of records created without one: the first enabled brand. */
export async function defaultBrandId(transaction?: Transaction): Promise<number> {
  const brand = await Brand.findOne({ where: { enabled: 1 }, order: [['id', 'ASC']], attributes: ['id'], transaction })
    ?? await Brand.findOne({ order: [['id', 'ASC']], attributes: ['id'], transaction });
  if (!brand) throw new Error('No brand exists: run the seed');
  return brand.id;
}

/** Additional emails: distinct from the primary one and not used by another user of the brand. */
async function replaceAdditionalEmails(user: User, emails: string[], transaction: Transaction, fresh = false) {
  const unique = [...new Set(emails)];
  const clash = unique.findIndex((e) => e === user.email);
  if (clash >= 0) throw new ValidationError(`The additional email.${clash} must be different from the email.`);
  if (unique.length) {
    const [primaries, extras] = await Promise.all([
      User.findAll({ where: { type: 'user', brand_id: user.brand_id, email: { [Op.in]: unique }, id: { [Op.ne]: user.id } }, attributes: ['email'], transaction }),
      UserEmail.findAll({ where: { email: { [Op.in]: unique }, user_id: { [Op.ne]: user.id } }, attributes: ['email', 'user_id'], transaction }),
    ]);
    const otherOwners = extras.length
      ? new Set((await User.findAll({ where: { id: { [Op.in]: extras.map((e) => e.user_id) }, brand_id: user.brand_id }, attributes: ['id'], transaction })).map((u) => u.id))
      : new Set<number>();
    const taken = new Set([...primaries.map((u) => u.email), ...extras.filter((e) => otherOwners.has(e.user_id)).map((e) => e.email)]);
    const i = unique.findIndex((e) => taken.has(e));
    if (i >= 0) throw new ValidationError(`The additional email.${i} has already been taken.`);
  }
  if (!fresh) await UserEmail.destroy({ where: { user_id: user.id }, transaction });
  if (unique.length) await UserEmail.bulkCreate(unique.map((email) => ({ user_id: user.id, email })), { transaction });
}

function checkVerifiedNeedsPassword(emailVerified: number | undefined, hasPassword: boolean) {
  if (emailVerified === 1 && !hasPassword) throw new ValidationError('The password field is required when email verified is 1.');
}

/** Input fields stored as they are. */
const COLUMNS = ['firstname', 'lastname', 'email', 'country', 'language_code', 'timezone', 'email_verified', 'active', 'organisation_notifications'] as const;

export async function createUser(input: Record<string, any>, transaction: Transaction): Promise<User> {
  const brandId = input.brand_id ?? (await defaultBrandId(transaction));
  await assertExist(Brand, 'brand_id', brandId, transaction);
  const phones = normalisePhones(input.phone);
  checkVerifiedNeedsPassword(input.email_verified, !!input.password);
  await assertEmailFree('user', input.email, brandId, null, transaction);
  await assertLanguage(input.language_code, transaction);
  const defaults = await personDefaults();
  const user = await User.create({
    type: 'user', brand_id: brandId, ...sent(input, COLUMNS),
    language_code: input.language_code || defaults.language_code,
    timezone: input.timezone || defaults.timezone,
    ...(await passwordValues(input.password)),
  }, { transaction });
  if (input.additional_email) await replaceAdditionalEmails(user, input.additional_email, transaction, true);
  if (phones) await replacePhones(user.id, phones, transaction, true);
  if (input.groups) await replaceGroups(user.id, 'user', input.groups, transaction, true);
  await applyMembership(user, input, true, transaction);
  await applyCustomFieldValues('user', user.id, input.customfield, { brandId, creating: true, overwriteLocked: true, transaction });
  await maybeSendVerification(user, input.send_email, transaction);
  return user;
}

export async function updateUser(user: User, input: Record<string, any>, transaction: Transaction): Promise<void> {
  const phones = normalisePhones(input.phone);
  checkVerifiedNeedsPassword(input.email_verified, !!(input.password ?? user.password));
  const brandId = input.brand_id ?? user.brand_id;
  if (brandId !== user.brand_id) {
    // Moving a user to another brand: organisations and custom field values are per brand.
    await assertExist(Brand, 'brand_id', brandId, transaction);
    const staysInOrganisation = user.organisation_id && input.organisation_id !== 0;
    if (staysInOrganisation) throw new ValidationError('The brand of a user in an organisation cannot be changed: remove the user from the organisation first (organisation_id 0).');
  }
  if ((input.email !== undefined && input.email !== user.email) || brandId !== user.brand_id) {
    await assertEmailFree('user', input.email ?? user.email, brandId, user.id, transaction);
  }
  await assertLanguage(input.language_code, transaction);
  await user.update({ ...sent(input, COLUMNS), brand_id: brandId, ...(await passwordValues(input.password)) }, { transaction });
  if (input.additional_email) await replaceAdditionalEmails(user, input.additional_email, transaction);
  if (phones) await replacePhones(user.id, phones, transaction);
  if (input.groups) await replaceGroups(user.id, 'user', input.groups, transaction);
  await applyMembership(user, input, false, transaction);
  await applyCustomFieldValues('user', user.id, input.customfield, {
    brandId: user.brand_id!, creating: false, overwriteLocked: input.overwrite_customfield_values === 1, transaction,
  });
  await maybeSendVerification(user, input.send_email, transaction);
}

export async function deleteUser(user: User, transaction: Transaction): Promise<void> {
  await deleteCustomFieldValues('user', user.id, transaction);
  await user.destroy({ transaction });
}
