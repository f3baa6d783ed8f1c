import { parsePhoneNumberFromString } from 'libphonenumber-js';
import type { Transaction } from 'sequelize';
import { assertEnabledLanguage } from '../../core/enabledLanguage';
import { Group, UserGroup, UserPhone } from '../../db/models';
import { emailScope, type EmailScope } from '../../db/models/PersonEmail';
import { ValidationError } from '../../errors';
import { assertExist } from '../../db/exists';
import { setLinks } from '../../db/links';
import { isCountry } from '../../lib/countries';
import { isTimeZone } from '../../lib/timezones';
import { Joi, field } from '../../lib/validation';
import { definitions } from '../../db/definitions';
import { readSettings } from '../../db/settings';
import { onceInTransaction } from '../../db/transaction';
import { select } from '../../db/select';
import { hashPassword } from '../passwords';

/** Fields users and operators share, as joi schemas (no defaults: create schemas add them). */
export const personFields = {
  firstname: field.nullable(255),
  lastname: field.nullable(255),
  email: field.email(),
  password: Joi.string().min(8).max(1024),
  send_email: field.flag(),
  // An empty value (`phone=`) clears the numbers, as it clears a ticket's `tag` or `cc`.
  phone: Joi.array().items(Joi.string().trim().max(32)).single().max(20).allow('', null),
  // An assigned ISO 3166-1 alpha-2 code (GB, not UK).
  country: Joi.string().trim().uppercase().pattern(/^[A-Z]{2}$/, 'country').allow('', null)
    .custom((v: string, helpers) => (isCountry(v) ? v : helpers.error('any.invalid'))),
  // An enabled language of the install: checked against the database by assertLanguage.
  language_code: Joi.string().trim().lowercase().pattern(/^[a-z]{2}$/, 'language').allow('', null),
  // An IANA name, current or legacy (lib/timezones.ts).
  timezone: Joi.string().trim().max(64).allow('', null).custom((v: string, helpers) => (isTimeZone(v) ? v : helpers.error('any.invalid'))),
  active: field.flag(),
};

/** E.164: `+`, a country code (no leading 0) and at most 15 digits in all. */
const E164 = /^\+[1-9]\d{1,14}$/;
/** A number as written: `+`, then digits and the marks around them (`+44 20 7946-0958`, `+1 (212) 555.0100`). */
const WRITTEN = /^\+[\d\s().\-/]+$/;

/**
 * A phone number in E.164, normalised, or null when it is none: every well-formed number is
 * taken, whether or not its range is in service (libphonenumber's isValid() refused the reserved
 * +447700900123 and every new range its metadata did not know yet). Its digits are stored as
 * libphonenumber writes them where it knows the country code: a trunk prefix written after it
 * (`+44 (0)20...`) is dropped.
 */
export function e164(raw: string): string | null {
  if (!WRITTEN.test(raw)) return null;
  const digits = `+${raw.replace(/\D/g, '')}`;
  const number = parsePhoneNumberFromString(digits)?.number ?? digits;
  return E164.test(number) ? number : null;
}

const notE164 = (name: string) => `The ${name} must be a valid phone number in E.164 format (for example +441234567890).`;

/** The user list's `phone` filter: one number, read as a write reads it (e164). */
export const phoneFilterSchema = () => Joi.string().trim().custom((v: string) => {
  const number = e164(v);
  if (number === null) throw new Error(notE164('phone'));
  return number;
});

/** Phone numbers must be E.164 (e164); they are stored normalised. null (an empty value): none. */
export function normalisePhones(phones: string[] | null | undefined): string[] | undefined {
  if (phones === undefined) return undefined;
  if (phones === null) return [];
  return phones.map((raw, i) => {
    const number = e164(raw);
    if (number === null) throw new ValidationError(notE164(`phone.${i}`));
    return number;
  });
}

/** Sets the person's phone numbers to `numbers`, in their order (db/links.ts: `fresh`, nothing written when unchanged). */
export async function replacePhones(userId: number, numbers: string[], transaction: Transaction, fresh = false) {
  await setLinks(UserPhone, { user_id: userId }, 'number', numbers, transaction, { fresh, ordered: true });
}

/** Sets the person's groups to exactly `groupIds` (groups of the person's kind). */
export async function replaceGroups(userId: number, type: 'user' | 'operator', groupIds: number[], transaction: Transaction, fresh = false) {
  await assertExist(Group, 'groups', groupIds, transaction, { type });
  await setLinks(UserGroup, { user_id: userId }, 'group_id', groupIds, transaction, { fresh });
}

/** `language_code` must name an enabled language of the install. */
export async function assertLanguage(code: string | null | undefined, transaction: Transaction) {
  await assertEnabledLanguage('language_code', code, transaction);
}

/** The system defaults a new person takes when no language or timezone is given. */
export async function personDefaults(transaction: Transaction): Promise<{ language_code: string; timezone: string }> {
  // Kept per process (db/definitions), and read once per transaction when Redis cannot say whether
  // they changed: a batch of imported mails creates a user per sender.
  const core = await onceInTransaction(transaction, 'settings.core', () => definitions.get('settings.core', (t) => readSettings('core', t), transaction));
  return { language_code: core.default_frontend_language || 'en', timezone: core.default_timezone || 'UTC' };
}

/**
 * The addresses among `emails` that another person holds in the scope, as a main or an additional
 * address. This check gives the usual answer; the unique key of person_emails decides races.
 */
export async function takenEmails(scope: EmailScope, emails: string[], exceptUserId: number | null, transaction: Transaction): Promise<Set<string>> {
  if (!emails.length) return new Set();
  const rows = await select<{ email: string }>(
    `SELECT email FROM person_emails WHERE scope = ? AND email IN (?)${exceptUserId ? ' AND user_id <> ?' : ''}`,
    [scope, [...new Set(emails)], ...(exceptUserId ? [exceptUserId] : [])], { transaction },
  );
  return new Set(rows.map((r) => r.email));
}

/**
 * Another account of the same kind (and brand, for users) already has this email, as its main
 * address or (users) as an additional one.
 */
export async function assertEmailFree(type: 'user' | 'operator', email: string, brandId: number | null, exceptId: number | null, transaction: Transaction) {
  if ((await takenEmails(emailScope(type, brandId), [email], exceptId, transaction)).size) {
    throw new ValidationError('The email has already been taken.');
  }
}

export async function passwordValues(password: string | undefined): Promise<{ password?: string }> {
  return password === undefined ? {} : { password: await hashPassword(password) };
}
