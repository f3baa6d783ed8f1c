import { Group, Organisation, User, UserEmail, UserGroup, UserPhone } from '../../db/models';
import type { CustomFieldValue } from '../../db/models';
import { loadById, loadLinked, loadMany } from '../../db/load';
import { pick } from '../../lib/serialize';
import { OPERATOR_GROUP_FIELDS } from '../groupFields';
import type { View } from '../../http/resource';
import { loadCustomFieldValues, serializeCustomFieldValue } from '../../customfields/values';

/**
 * Fields of a user or operator in every response, before the relations. `organisation_notifications`
 * (beyond the spec's list: what a write sets, docs/api-decisions.md) is a user's only.
 */
export const PERSON_FIELDS = [
  'id', 'brand_id', 'firstname', 'lastname', 'email', 'email_verified', 'active', 'organisation_id', 'organisation_access_level',
  'organisation_notifications', 'country', 'language_code', 'timezone', 'avatar', 'twofa_enabled', 'twofa_secret', 'twofa_token', 'twitter_id', 'twitter_handle',
  'facebook_id', 'created_at', 'updated_at',
] as const;

/** What an operator's responses leave out: they have no brand and get no organisation's mail. */
export const USER_ONLY = new Set(['brand_id', 'organisation_notifications']);

/** What a create response leaves out (the spec). */
export const CREATE_OMITS = new Set(['avatar', 'twofa_enabled', 'twofa_secret', 'twofa_token', 'twitter_id', 'twitter_handle', 'facebook_id']);

/** The user summary embedded in organisations (and later tickets and messages). */
export const USER_SUMMARY_FIELDS = [
  'id', 'firstname', 'lastname', 'email', 'email_verified', 'organisation_id', 'organisation_access_level', 'country', 'language_code',
  'timezone', 'avatar', 'twofa_enabled', 'twofa_secret', 'twofa_token', 'twitter_id', 'twitter_handle', 'facebook_id', 'created_at',
  'updated_at',
] as const;

export const ORGANISATION_FIELDS = ['id', 'brand_id', 'owner_id', 'name', 'country', 'language_code', 'timezone', 'notes', 'created_at', 'updated_at'] as const;

export const formattedName = (u: { firstname: string | null; lastname: string | null; email: string }) =>
  [u.firstname, u.lastname].filter((s) => s && s.trim()).join(' ').trim() || u.email;

export type UserSummaryRow = Pick<User, (typeof USER_SUMMARY_FIELDS)[number]>;

/** A user as embedded in other records; takes a model instance or a raw row. */
export function serializeUserSummary(u: UserSummaryRow): Record<string, any> {
  const out = pick(u, USER_SUMMARY_FIELDS);
  out.formatted_name = formattedName(u);
  return out;
}

const timestamps = (r: { created_at: number; updated_at: number }) => ({ created_at: r.created_at, updated_at: r.updated_at });

export interface PersonRelations {
  phones: Map<number, UserPhone[]>;
  groups: Map<number, Group[]>;
  customfields?: Map<number, CustomFieldValue[]>;
  emails?: Map<number, UserEmail[]>;
  organisations?: Map<number, Organisation>;
}

/**
 * What the write that created a person knows of them: whether nothing links to them yet (no
 * phone numbers, groups, custom field values or additional addresses).
 */
export interface KnownPerson {
  unlinked: boolean;
}

/**
 * Loads the relations of a page of users or operators: one query per relation, whatever the page
 * size. `known` (by person id): what is not read again.
 */
export async function loadPeople(people: User[], opts: { customfields: boolean; detail: boolean }, known?: ReadonlyMap<number, KnownPerson>): Promise<PersonRelations> {
  const ids = people.filter((p) => !known?.get(p.id)?.unlinked).map((p) => p.id);
  const [phones, groups, customfields, emails, organisations] = await Promise.all([
    loadMany(UserPhone, 'user_id', ids),
    loadLinked(UserGroup, 'user_id', 'group_id', ids, Group),
    opts.customfields ? loadCustomFieldValues(ids, 'user') : Promise.resolve(undefined),
    opts.detail ? loadMany(UserEmail, 'user_id', ids) : Promise.resolve(undefined),
    opts.detail ? loadById(Organisation, people.map((p) => p.organisation_id)) : Promise.resolve(undefined),
  ]);
  return { phones, groups, customfields, emails, organisations };
}

/** A group as embedded in people, departments and roles (`administrator` included, as SupportPal shows it). */
export const serializeGroup = (g: Group) => pick(g, OPERATOR_GROUP_FIELDS);

/** PERSON_FIELDS as a user's or an operator's responses show them, in create responses or others: four constant lists (for `pick`). */
const PERSON_FIELD_LISTS = [false, true].map((operator) => [false, true].map((create) =>
  PERSON_FIELDS.filter((k) => !(operator && USER_ONLY.has(k)) && !(create && CREATE_OMITS.has(k)))));
const personFields = (operator: boolean, create: boolean): readonly string[] => PERSON_FIELD_LISTS[Number(operator)][Number(create)];

/**
 * A user or an operator as the spec shows it for `view`. Operators have no brand, no custom
 * fields and no organisation_notifications; show, create and update of a user add `organisation`
 * and `additional_emails`; create leaves out avatar, twofa_*, twitter_* and facebook_id.
 */
export function serializePerson(p: User, rel: PersonRelations, view: View) {
  const operator = p.type === 'operator';
  const out = pick(p, personFields(operator, view === 'create'));
  out.formatted_name = formattedName(p);
  out.phonenumbers = (rel.phones.get(p.id) ?? []).map((n) => ({ id: n.id, user_id: n.user_id, number: n.number, ...timestamps(n) }));
  if (!operator) out.customfields = (rel.customfields?.get(p.id) ?? []).map((v) => serializeCustomFieldValue(v, 'user_id'));
  out.groups = (rel.groups.get(p.id) ?? []).map((group) => ({ ...serializeGroup(group), pivot: { user_id: p.id, group_id: group.id } }));
  if (!operator && view !== 'list') {
    const org = p.organisation_id ? rel.organisations?.get(p.organisation_id) : undefined;
    out.organisation = org ? pick(org, ORGANISATION_FIELDS) : null;
    out.additional_emails = (rel.emails?.get(p.id) ?? []).map((e) => ({ id: e.id, user_id: e.user_id, email: e.email, ...timestamps(e) }));
  }
  return out;
}
