import { parsePhoneNumberFromString } from 'libphonenumber-js';
import { Op, type Transaction } from 'sequelize';
import { Group, Language, User, UserEmail, UserGroup, UserPhone } from '../db/models';
import { ValidationError, invalid } from '../http/errors';
import { assertExist } from '../http/exists';
import { Joi, field } from '../http/validation';
import { readSettings } from '../http/settings';
import { enqueue } from '../queue/outbox';
import { hashPassword } from './passwords';

const TIMEZONES = new Set([...Intl.supportedValuesOf('timeZone'), 'UTC']);

/** Fields users and operators share, as joi schemas (no defaults: create schemas add them). */
export const personFields = {
  firstname: field.nullable(255),
  lastname: field.nullable(255),
  email: field.email(),
  password: Joi.string().min(8).max(1024),
  send_email: field.flag(),
  phone: Joi.array().items(Joi.string().trim().max(32)).single().max(20),
  country: Joi.string().trim().uppercase().pattern(/^[A-Z]{2}$/, 'country').allow('', null),
  language_code: Joi.string().trim().lowercase().pattern(/^[a-z]{2}$/, 'language').allow('', null),
  timezone: Joi.string().trim().max(64).allow('', null).custom((v, helpers) => (v && !TIMEZONES.has(v) ? helpers.error('any.invalid') : v)),
  active: field.flag(),
};

/** Phone numbers must be E.164 (`+` and country code); they are stored normalised. */
export function normalisePhones(phones: string[] | undefined): string[] | undefined {
  if (!phones) return undefined;
  return phones.map((raw, i) => {
    const parsed = raw.startsWith('+') ? parsePhoneNumberFromString(raw) : undefined;
    if (!parsed || !parsed.isValid()) throw new ValidationError(`The phone.${i} must be a valid phone number in E.164 format (for example +441234567890).`);
    return parsed.number;
  });
}

/**
 * The `replace*` helpers set a relation to exactly the given rows. `fresh` (a record created in
 * this transaction) skips the DELETE: it has nothing to delete, and its gap locks would make
 * concurrent creates deadlock.
 */
export async function replacePhones(userId: number, numbers: string[], transaction: Transaction, fresh = false) {
  if (!fresh) await UserPhone.destroy({ where: { user_id: userId }, transaction });
  const unique = [...new Set(numbers)];
  if (unique.length) await UserPhone.bulkCreate(unique.map((number) => ({ user_id: userId, number })), { transaction });
}

/** Sets the person's groups to exactly `groupIds` (groups of the person's kind). */
export async function replaceGroups(userId: number, type: 'user' | 'operator', groupIds: number[], transaction: Transaction, fresh = false) {
  await assertExist(Group, 'groups', groupIds, transaction, { type });
  if (!fresh) await UserGroup.destroy({ where: { user_id: userId }, transaction });
  const unique = [...new Set(groupIds)];
  if (unique.length) await UserGroup.bulkCreate(unique.map((group_id) => ({ user_id: userId, group_id })), { transaction });
}

/** `language_code` must name a language of the install. */
export async function assertLanguage(code: string | null | undefined, transaction: Transaction) {
  if (!code) return;
  if (!(await Language.findOne({ where: { code }, transaction }))) throw invalid('language_code');
}

/** The system defaults a new person takes when no language or timezone is given. */
export async function personDefaults(): Promise<{ language_code: string; timezone: string }> {
  const core = await readSettings('core');
  return { language_code: core.default_frontend_language || 'en', timezone: core.default_timezone || 'UTC' };
}

/**
 * Another account of the same kind (and brand, for users) already has this email, as its main
 * address or (users) as an additional one.
 */
export async function assertEmailFree(type: 'user' | 'operator', email: string, brandId: number | null, exceptId: number | null, transaction: Transaction) {
  const where: Record<string, unknown> = { type, email };
  if (type === 'user') where.brand_id = brandId;
  if (exceptId) where.id = { [Op.ne]: exceptId };
  const taken = new ValidationError('The email has already been taken.');
  if (await User.findOne({ where, transaction, attributes: ['id'] })) throw taken;
  if (type !== 'user') return;
  const extra = await UserEmail.findAll({ where: { email, ...(exceptId ? { user_id: { [Op.ne]: exceptId } } : {}) }, attributes: ['user_id'], transaction });
  if (extra.length && await User.findOne({ where: { id: { [Op.in]: extra.map((e) => e.user_id) }, brand_id: brandId }, attributes: ['id'], transaction })) throw taken;
}

export async function passwordValues(password: string | undefined): Promise<{ password?: string }> {
  return password === undefined ? {} : { password: await hashPassword(password) };
}

/**
 * The verification mail that lets a person set a password: only for someone without a password
 * (and, for an operator, only an active one). Written to the outbox in the same transaction.
 */
export async function maybeSendVerification(person: User, sendEmail: number | undefined, transaction: Transaction): Promise<boolean> {
  if (sendEmail !== 1 || person.password) return false;
  if (person.type === 'operator' && person.active !== 1) return false;
  await enqueue(transaction, 'user.verification', { userId: person.id });
  return true;
}
