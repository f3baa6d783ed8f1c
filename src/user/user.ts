import { Op, Sequelize } from 'sequelize';
import { Organisation, User, UserEmail, UserPhone } from '../db/models';
import { equals, flagFilter, likeContains, type Filter } from '../http/listQuery';
import { resourceRouter, type ResourceDef } from '../http/resource';
import { Joi, field } from '../http/validation';
import { customFieldFilter } from './customFieldValues';
import { personFields } from './people';
import { loadPeople, serializePerson, type PersonRelations } from './present';
import { createUser, deleteUser, updateUser } from './users';

const contains = (column: string): Filter => ({ schema: field.string(), where: (v: string) => ({ [column]: { [Op.like]: likeContains(v) } }) });

/** Ids found by a look-up query, as a condition on `column` (null: nothing can match). */
const idsWhere = (column: string, ids: number[]) => (ids.length ? { [column]: { [Op.in]: [...new Set(ids)] } } : null);

export const userFilters: Record<string, Filter> = {
  search: {
    schema: field.string(),
    where: (v: string) => ({
      [Op.or]: [
        { firstname: { [Op.like]: likeContains(v) } },
        { lastname: { [Op.like]: likeContains(v) } },
        { email: { [Op.like]: likeContains(v) } },
        Sequelize.where(Sequelize.fn('CONCAT_WS', ' ', Sequelize.col('firstname'), Sequelize.col('lastname')), { [Op.like]: likeContains(v) }),
      ],
    }),
  },
  brand_id: equals('brand_id', field.id()),
  firstname: contains('firstname'),
  lastname: contains('lastname'),
  // The primary address, or one of the additional ones.
  email: {
    schema: field.email(),
    async where(v: string) {
      const extra = await UserEmail.findAll({ where: { email: v }, attributes: ['user_id'] });
      return { [Op.or]: [{ email: v }, ...(extra.length ? [{ id: { [Op.in]: extra.map((e) => e.user_id) } }] : [])] };
    },
  },
  email_verified: flagFilter('email_verified'),
  active: flagFilter('active'),
  organisation_id: equals('organisation_id', field.id()),
  organisation_name: {
    schema: field.string(),
    async where(v: string) {
      const orgs = await Organisation.findAll({ where: { name: { [Op.like]: likeContains(v) } }, attributes: ['id'] });
      return idsWhere('organisation_id', orgs.map((o) => o.id));
    },
  },
  phone: {
    schema: Joi.string().trim().pattern(/^\+[1-9]\d{1,14}$/, 'E.164'),
    async where(v: string) {
      const phones = await UserPhone.findAll({ where: { number: v }, attributes: ['user_id'] });
      return idsWhere('id', phones.map((p) => p.user_id));
    },
  },
  country: equals('country', Joi.string().trim().uppercase().pattern(/^[A-Z]{2}$/, 'country')),
  language_code: equals('language_code', Joi.string().trim().lowercase().pattern(/^[a-z]{2}$/, 'language')),
  customfield: customFieldFilter('user'),
};

const userFields = {
  ...personFields,
  brand_id: field.id(),
  additional_email: Joi.array().items(field.email()).single().max(50),
  email_verified: field.flag(),
  organisation: field.nullable(255),
  organisation_id: Joi.number().integer().min(0),
  organisation_access_level: field.flag(),
  organisation_notifications: field.flag(),
  customfield: Joi.object().pattern(/^\d+$/, Joi.any()),
  groups: field.idArray(),
};

export const userResource: ResourceDef<User, PersonRelations> = {
  path: '/user',
  model: User,
  label: 'user',
  scope: { type: 'user' },
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
  load: (users, ctx) => loadPeople(users, { customfields: true, detail: ctx.view !== 'list' }),
  serialize: (user, rel, ctx) => serializePerson(user, rel, ctx.view),
  create: (input, { transaction }) => createUser(input, transaction),
  update: (user, input, { transaction }) => updateUser(user, input, transaction),
  destroy: (user, { transaction }) => deleteUser(user, transaction),
};

export const userRouter = resourceRouter(userResource);
