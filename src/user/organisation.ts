import { Op, type Transaction } from 'sequelize';
import { Brand, Organisation, OrganisationDomain, User } from '../db/models';
import type { CustomFieldValue } from '../db/models';
import { ValidationError, invalid } from '../http/errors';
import { assertExist } from '../http/exists';
import { equals, likeContains } from '../http/listQuery';
import { loadMany } from '../http/load';
import { resourceRouter, type ResourceDef } from '../http/resource';
import { pick, sent } from '../http/serialize';
import { Joi, field } from '../http/validation';
import { applyCustomFieldValues, customFieldFilter, deleteCustomFieldValues, loadCustomFieldValues, serializeCustomFieldValue } from './customFieldValues';
import { assertLanguage, personFields } from './people';
import { ORGANISATION_FIELDS, USER_SUMMARY_FIELDS, userSummary, type UserSummaryRow } from './present';
import { defaultBrandId } from './users';

interface OrganisationRelations {
  users: Map<number, UserSummaryRow[]>;
  customfields: Map<number, CustomFieldValue[]>;
  domains: Map<number, OrganisationDomain[]>;
}

/** Domains claimed by an organisation: users of the brand with an email there join it. */
async function replaceDomains(org: Organisation, domains: string[], transaction: Transaction, fresh = false) {
  const unique = [...new Set(domains.map((d) => d.toLowerCase()))];
  if (unique.length) {
    const claims = await OrganisationDomain.findAll({ where: { domain: { [Op.in]: unique }, organisation_id: { [Op.ne]: org.id } }, transaction });
    if (claims.length) {
      const sameBrand = await Organisation.findAll({ where: { id: { [Op.in]: claims.map((c) => c.organisation_id) }, brand_id: org.brand_id }, attributes: ['id'], transaction });
      const taken = new Set(claims.filter((c) => sameBrand.some((o) => o.id === c.organisation_id)).map((c) => c.domain));
      const i = unique.findIndex((d) => taken.has(d));
      if (i >= 0) throw new ValidationError(`The domain.${i} has already been taken by another organisation.`);
    }
  }
  if (!fresh) await OrganisationDomain.destroy({ where: { organisation_id: org.id }, transaction });
  if (unique.length) await OrganisationDomain.bulkCreate(unique.map((domain) => ({ organisation_id: org.id, domain })), { transaction });
}

/** `access_level[<user id>]=<0|1>`: puts users of the organisation's brand in it at that level. */
async function applyAccessLevels(org: Organisation, levels: Record<string, number> | undefined, transaction: Transaction) {
  if (!levels) return;
  const ids = Object.keys(levels).map(Number);
  if (!ids.length) return;
  const users = await User.findAll({ where: { id: { [Op.in]: ids }, type: 'user', brand_id: org.brand_id }, transaction });
  const found = new Set(users.map((u) => u.id));
  const missing = ids.find((id) => !found.has(id));
  if (missing !== undefined) throw invalid(`access_level.${missing}`);
  for (const user of users) await user.update({ organisation_id: org.id, organisation_access_level: levels[String(user.id)] }, { transaction });
}

const fields = {
  brand_id: field.id(),
  customfield: Joi.object().pattern(/^\d+$/, Joi.any()),
  country: personFields.country,
  language_code: personFields.language_code,
  timezone: personFields.timezone,
  notes: field.text(),
  domain: Joi.array().items(Joi.string().trim().lowercase().max(255).domain({ tlds: false })).single().max(100),
  access_level: Joi.object().pattern(/^\d+$/, field.flag()),
};

/** Input fields stored as they are. */
const COLUMNS = ['name', 'country', 'language_code', 'timezone', 'notes'] as const;

export const organisationResource: ResourceDef<Organisation, OrganisationRelations> = {
  path: '/organisation',
  model: Organisation,
  label: 'organisation',
  sortable: ['name', 'brand_id', 'created_at', 'updated_at'],
  filters: {
    search: { schema: field.string(), where: (v: string) => ({ name: { [Op.like]: likeContains(v) } }) },
    brand_id: equals('brand_id', field.id()),
    customfield: customFieldFilter('organisation'),
  },
  dates: true,
  createSchema: Joi.object({ name: field.string().required(), ...fields }),
  updateSchema: Joi.object({ name: field.string(), ...fields }),
  async create(input, { transaction }) {
    const brandId = input.brand_id ?? (await defaultBrandId(transaction));
    await assertExist(Brand, 'brand_id', brandId, transaction);
    await assertLanguage(input.language_code, transaction);
    const org = await Organisation.create({ brand_id: brandId, ...sent(input, COLUMNS) }, { transaction });
    if (input.domain) await replaceDomains(org, input.domain, transaction, true);
    await applyAccessLevels(org, input.access_level, transaction);
    await applyCustomFieldValues('organisation', org.id, input.customfield, { brandId, creating: true, overwriteLocked: true, transaction });
    return org;
  },
  async update(org, input, { transaction }) {
    if (input.brand_id !== undefined && input.brand_id !== org.brand_id) {
      await assertExist(Brand, 'brand_id', input.brand_id, transaction);
      if (await User.count({ where: { organisation_id: org.id }, transaction })) {
        throw new ValidationError('The brand of an organisation with users cannot be changed: its users must be of the same brand.');
      }
    }
    await assertLanguage(input.language_code, transaction);
    await org.update({ ...sent(input, COLUMNS), ...(input.brand_id !== undefined ? { brand_id: input.brand_id } : {}) }, { transaction });
    if (input.domain) await replaceDomains(org, input.domain, transaction);
    await applyAccessLevels(org, input.access_level, transaction);
    await applyCustomFieldValues('organisation', org.id, input.customfield, { brandId: org.brand_id, creating: false, overwriteLocked: true, transaction });
  },
  async destroy(org, { transaction }) {
    await User.update({ organisation_id: null, organisation_access_level: null }, { where: { organisation_id: org.id }, transaction });
    await deleteCustomFieldValues('organisation', org.id, transaction);
    await org.destroy({ transaction });
  },
  async load(orgs) {
    const ids = orgs.map((o) => o.id);
    const [users, customfields, domains] = await Promise.all([
      // Raw rows of just the summary columns: a page can embed hundreds of users.
      loadMany(User, 'organisation_id', ids, { where: { type: 'user' }, attributes: [...USER_SUMMARY_FIELDS], raw: true }) as Promise<Map<number, UserSummaryRow[]>>,
      loadCustomFieldValues(ids, 'organisation'),
      loadMany(OrganisationDomain, 'organisation_id', ids),
    ]);
    return { users, customfields, domains };
  },
  serialize: (org, rel) => ({
    ...pick(org, ORGANISATION_FIELDS),
    users: (rel.users.get(org.id) ?? []).map(userSummary),
    customfields: (rel.customfields.get(org.id) ?? []).map((v) => serializeCustomFieldValue(v, 'organisation_id')),
    domains: (rel.domains.get(org.id) ?? []).map((d) => d.domain),
  }),
};

export const organisationRouter = resourceRouter(organisationResource);
