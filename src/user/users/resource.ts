import { User } from '../../db/models';
import { likeContains, sqlCondition, trusted } from '../../db/sql';
import { equals, flagFilter, type Filter } from '../../http/listQuery';
import { Written, resourceRouter, type ResourceDef } from '../../http/resource';
import { Joi, field } from '../../lib/validation';
import { customFieldFilter, customFieldValuesSchema } from '../../customfields/values';
import { personFields, phoneFilterSchema } from '../people/rules';
import { loadPeople, serializePerson, type KnownPerson, type PersonRelations } from '../people/presenter';
import { createUser, deleteUser, updateUser, type CreateUserInput } from './service';
import { ORGANISATION_GRAMS, PEOPLE_GRAMS, narrowedByGrams } from '../../db/searchGrams';

/** A part of a name: the people holding the part's grams (migration 068), then its LIKE. */
const contains = (column: 'firstname' | 'lastname'): Filter => ({
  schema: field.string(),
  where: (v: string) => narrowedByGrams(PEOPLE_GRAMS, v, sqlCondition`${trusted(column)} LIKE ${likeContains(v)}`),
});

export const userFilters: Record<string, Filter> = {
  search: {
    schema: field.string(),
    // The first name, the last name or the full name: a part of either name is a part of the
    // full one, so the full name's LIKE alone finds them all; or a part of the address (stored
    // lower-cased and compared exactly: binary collation). Narrowed first to the people holding
    // the term's grams (migration 068), where it read every person.
    where: (v: string) => narrowedByGrams(PEOPLE_GRAMS, v, sqlCondition`(CONCAT_WS(' ', firstname, lastname) LIKE ${likeContains(v)}
      OR email LIKE ${likeContains(v.toLowerCase())})`),
  },
  brand_id: equals('brand_id', field.id()),
  firstname: contains('firstname'),
  lastname: contains('lastname'),
  // The primary address, or one of the additional ones.
  email: {
    schema: field.email(),
    where: (v: string) => sqlCondition`email = ${v} OR id IN (SELECT user_id FROM user_emails WHERE email = ${v})`,
  },
  email_verified: flagFilter('email_verified'),
  active: flagFilter('active'),
  organisation_id: equals('organisation_id', field.id()),
  organisation_name: {
    schema: field.string(),
    // A part of the name: the organisations holding its grams (migration 069), then its LIKE.
    where: async (v: string) => sqlCondition`organisation_id IN (SELECT id FROM organisations
      WHERE ${await narrowedByGrams(ORGANISATION_GRAMS, v, sqlCondition`name LIKE ${likeContains(v)}`)})`,
  },
  phone: {
    schema: phoneFilterSchema(),
    where: (v: string) => sqlCondition`id IN (SELECT user_id FROM user_phones WHERE number = ${v})`,
  },
  country: equals('country', Joi.string().trim().uppercase().pattern(/^[A-Z]{2}$/, 'country')),
  language_code: equals('language_code', Joi.string().trim().lowercase().pattern(/^[a-z]{2}$/, 'language')),
  customfield: customFieldFilter('user'),
};

const userFields = {
  ...personFields,
  brand_id: field.id(),
  // An empty value (`additional_email=`) clears the list, as it clears a ticket's `tag` or `cc`.
  additional_email: Joi.array().items(field.email()).single().max(50).allow('', null),
  email_verified: field.flag(),
  organisation: field.nullable(255),
  organisation_id: Joi.number().integer().min(0),
  organisation_access_level: field.flag(),
  organisation_notifications: field.flag(),
  customfield: customFieldValuesSchema(),
  groups: field.idArray().allow('', null),
};

export const userResource: ResourceDef<User, PersonRelations, KnownPerson> = {
  path: '/user',
  model: User,
  label: 'user',
  scope: { type: 'user' },
  counted: { kind: 'user', scopeFilter: 'brand_id', byValue: ['active', 'email_verified', 'country', 'language_code'] },
  // A password's hash is for signing in only: no read of a user carries it.
  unread: ['password'],
  sortable: ['firstname', 'lastname', 'email', 'brand_id', 'organisation_id', 'active', 'email_verified', 'country', 'created_at', 'updated_at'],
  filters: userFilters,
  dates: true,
  createSchema: Joi.object({
    ...userFields,
    email: field.email().required(),
    email_verified: field.flag().default(0),
    active: field.flag().default(1),
  }),
  updateSchema: Joi.object({ ...userFields, overwrite_customfield_values: field.flag().default(0) }),
  load: (users, ctx, known) => loadPeople(users, { customfields: true, detail: ctx.view !== 'list' }, known),
  serialize: (user, rel, ctx) => serializePerson(user, rel, ctx.view),
  // The answer presents the user as stored (every column, returned by its INSERT and kept by the
  // membership's updates), not read back; and when nothing was given to link, no links.
  create: async (input, { transaction }) => {
    const user = await createUser(input as CreateUserInput, transaction);
    const unlinked = !input.phone?.length && !input.groups?.length && !Object.keys(input.customfield ?? {}).length && !input.additional_email?.length;
    return new Written(user, { unlinked });
  },
  update: (user, input, { transaction, writesBefore }) => updateUser(user, input, transaction, writesBefore),
  destroy: (user, { transaction, grants }) => deleteUser(user, transaction, grants),
};

export const userRouter = resourceRouter(userResource);
