import { canonicalDomain, canonicalEmail } from '../lib/validation';
/**
 * What a unique key violation means to the caller. The database holds every uniqueness rule (the
 * services' checks only answer first when there is no race); when two requests race, the loser's
 * write fails on a unique key, and this registry turns the key's name into the 422 of the request
 * field that sent the value: `The email has already been taken.`, `The domain.1 has already been
 * taken.` (for a list, the item holding the duplicate value, found by matching the value MariaDB
 * reports against the request body).
 */

export const BRAND_EMAIL_TAKEN = 'The selected brand id is invalid: an email of the user belongs to another user of that brand.';
export const BRAND_DOMAIN_TAKEN = 'The selected brand id is invalid: a domain of the organisation is claimed by another organisation of that brand.';
const FALLBACK = 'A value sent has already been taken.';

interface Guarded {
  /** The request field, and whether it is a list (messages then name the item: `domain.1`). */
  field: string;
  list?: boolean;
  /** The value as the API stores it (what the key compares). */
  normalise(value: string): string;
}

interface UniqueKey {
  /** The request fields that can carry the key's value, in the order they are tried. */
  fields: Guarded[];
  /** The key's columns after the value, as they end MariaDB's duplicate entry (`<value>-<scope>`). */
  rest: RegExp;
  /** The answer when the duplicate is none of the values sent but the request sent this field. */
  otherwise?: { field: string; message: string };
}

const email = (v: string) => canonicalEmail(v);
const domain = (v: string) => canonicalDomain(v);

/** Unique keys by index name (those a request can run into; see the migrations). */
export const UNIQUE_KEYS: Record<string, UniqueKey> = {
  person_emails_email_scope: {
    fields: [{ field: 'email', normalise: email }, { field: 'additional_email', list: true, normalise: email }],
    rest: /-(?:operator|brand:\d+)$/,
    otherwise: { field: 'brand_id', message: BRAND_EMAIL_TAKEN },
  },
  organisation_domains_domain_brand: {
    fields: [{ field: 'domain', list: true, normalise: domain }],
    rest: /-\d+$/,
    otherwise: { field: 'brand_id', message: BRAND_DOMAIN_TAKEN },
  },
  // A single-column unique `name` (ticket tags; the key is named after the column).
  name: { fields: [{ field: 'name', normalise: (v) => v.trim() }], rest: /$/ },
  ticket_statuses_name_unique: { fields: [{ field: 'name', normalise: (v) => v.trim() }], rest: /$/ },
  ticket_priorities_name_unique: { fields: [{ field: 'name', normalise: (v) => v.trim() }], rest: /$/ },
  // A single-column unique `slug`: self-service tags (a role's slug has a key of that name too, and no request sends it).
  slug: { fields: [{ field: 'slug', normalise: (v) => v.trim() }], rest: /$/ },
};

export interface Duplicate {
  key: string;
  /** The duplicate entry, when MariaDB names it (not for a duplicate caused by a cascading update). */
  entry?: string;
}

/** ER_DUP_ENTRY, and the errors of an ON UPDATE CASCADE that would duplicate a child key. */
const DUP_ENTRY = 1062;
const CASCADE_DUPLICATE = new Set([1557, 1761, 1762]);

/** The unique key (and entry) a database error reports, or null if it is no unique violation. */
export function duplicateOf(err: unknown): Duplicate | null {
  const cause = (err as any)?.parent ?? (err as any)?.original ?? err;
  const errno = cause?.errno;
  const text = String(cause?.sqlMessage ?? cause?.message ?? '');
  // MySQL names the key `table.key`; MariaDB names it alone.
  const keyName = (k: string) => k.slice(k.lastIndexOf('.') + 1);
  if (errno === DUP_ENTRY) {
    const m = /Duplicate entry '([\s\S]*)' for key '([^']+)'/.exec(text);
    return m ? { key: keyName(m[2]), entry: m[1] } : { key: '' };
  }
  if (CASCADE_DUPLICATE.has(errno)) {
    const m = /key '([^']+)'/.exec(text);
    return { key: m ? keyName(m[1]) : '' };
  }
  return null;
}

/** `{0: a, 1: b}` and single values as a list, numbered the way validation messages number them. */
function listOf(value: unknown): unknown[] {
  if (Array.isArray(value)) return value;
  if (value && typeof value === 'object') {
    const keyed = value as Record<string, unknown>;
    const keys = Object.keys(keyed);
    return keys.every((k) => /^\d{1,6}$/.test(k)) ? keys.map(Number).sort((a, b) => a - b).map((k) => keyed[String(k)]) : [];
  }
  return value === undefined || value === null ? [] : [value];
}

/**
 * Whether the duplicate entry holds `value`. MariaDB cuts entries at 64 characters (ending them
 * with `...`): then the value must agree with what is left.
 */
function holds(entry: string, rest: RegExp, value: string): boolean {
  if (rest.test(entry)) return entry.replace(rest, '') === value;
  if (!entry.endsWith('...')) return false;
  const head = entry.slice(0, -3);
  const withSeparator = `${value}-`;
  return withSeparator.startsWith(head) || head.startsWith(withSeparator);
}

const label = (field: string) => field.replace(/_/g, ' ');

/** The 422 message for a unique violation, naming the field of `body` (the request) that sent the value. */
export function takenMessage(dup: Duplicate | null, body: unknown): string {
  const key = dup ? UNIQUE_KEYS[dup.key] : undefined;
  if (!key) return FALLBACK;
  const input = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
  if (dup!.entry !== undefined) {
    for (const guarded of key.fields) {
      const values = guarded.list ? listOf(input[guarded.field]) : [input[guarded.field]];
      const i = values.findIndex((v) => typeof v === 'string' && holds(dup!.entry!, key.rest, guarded.normalise(v)));
      if (i >= 0) return `The ${label(guarded.field)}${guarded.list ? `.${i}` : ''} has already been taken.`;
    }
  }
  if (key.otherwise && input[key.otherwise.field] !== undefined) return key.otherwise.message;
  return FALLBACK;
}
