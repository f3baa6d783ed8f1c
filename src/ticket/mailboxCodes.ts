import { Joi } from '../lib/validation';
import type { MailEncryption, MailProtocol } from '../db/models/DepartmentEmail';

/**
 * SupportPal's integer codes for a department email's `protocol` and `encryption` (its official
 * client reads them as integers): the index in these lists. Stored as the names; the API returns
 * the codes and takes either.
 */
export const PROTOCOL_CODES: readonly MailProtocol[] = ['imap', 'pop3'];
/** 0 none, 1 SSL/TLS from the first byte, 2 STARTTLS. */
export const ENCRYPTION_CODES: readonly MailEncryption[] = ['none', 'ssl', 'tls'];

export const codeOf = (names: readonly string[], name: string): number => names.indexOf(name);

/**
 * A value sent as its code (`1`, `"1"`) or its name (`"pop3"`, any case), as the stored name.
 * Anything else: `The selected <field> is invalid.`
 */
export const codeOrName = (names: readonly string[]) => Joi.any().custom((value: unknown, helpers) => {
  const text = typeof value === 'number' ? String(value) : typeof value === 'string' ? value.trim().toLowerCase() : null;
  if (text === null) return helpers.error('any.only');
  if (/^\d{1,2}$/.test(text) && Number(text) < names.length) return names[Number(text)];
  return names.includes(text) ? text : helpers.error('any.only');
}).description(`A code (${names.map((n, i) => `${i} ${n}`).join(', ')}) or its name.`);
