import { Op, type Transaction } from 'sequelize';
import { recordDeletions } from '../export/tombstones';
import { Brand, Organisation, OrganisationDomain, User } from '../db/models';
import type { CustomFieldValue } from '../db/models';
import { ValidationError, invalid } from '../errors';
import { assertExist } from '../db/exists';
import { writeCount } from '../db/writes';
import { setLinks } from '../db/links';
import { equals } from '../http/listQuery';
import { likeContains, sqlCondition } from '../db/sql';
import { ORGANISATION_GRAMS, narrowedByGrams } from '../db/searchGrams';
import { loadMany } from '../db/load';
import { resourceRouter, type ResourceDef } from '../http/resource';
import { pick, sent } from '../lib/serialize';
import { BRAND_DOMAIN_TAKEN } from '../db/uniqueKeys';
import { Joi, field, oneLine } from '../lib/validation';
import { canonicalDomain } from '../lib/validation';
import { applyCustomFieldValues, customFieldFilter, customFieldValuesSchema, deleteCustomFieldValues, loadCustomFieldValues, serializeCustomFieldValue } from '../customfields/values';
import { assertLanguage, personFields } from './people/rules';
import { ORGANISATION_FIELDS, USER_SUMMARY_FIELDS, serializeUserSummary, type UserSummaryRow } from './people/presenter';
import { defaultBrandId } from './users/service';
import { releaseOwnership } from './organisationMembership';
import { emit, emitAll } from '../events';

interface OrganisationRelations {
  users: Map<number, UserSummaryRow[]>;
  customfields: Map<number, CustomFieldValue[]>;
  domains: Map<number, OrganisationDomain[]>;
}

/**
 * Domains claimed by organisations, one organisation per domain and brand: the 422 names the
 * domain sent (or, for an organisation moved to another brand with its domains, the brand). The
 * unique key on (domain, brand_id) decides races; errors.ts words its refusal the same way.
 */
async function assertDomainsFree(orgId: number | null, brandId: number, domains: string[], sentDomains: boolean, transaction: Transaction) {
  if (!domains.length) return;
  const claims = await OrganisationDomain.findAll({
    where: { brand_id: brandId, domain: { [Op.in]: [...new Set(domains)] }, ...(orgId ? { organisation_id: { [Op.ne]: orgId } } : {}) },
    attributes: ['domain'],
    transaction,
  });
  const taken = new Set(claims.map((c) => c.domain));
  const i = domains.findIndex((d) => taken.has(d));
  if (i < 0) return;
  throw new ValidationError(sentDomains ? `The domain.${i} has already been taken.` : BRAND_DOMAIN_TAKEN);
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
  await releaseOwnership(users.filter((u) => u.organisation_id !== org.id).map((u) => u.id), org.id, transaction);
  const changed = users.filter((u) => u.organisation_id !== org.id || u.organisation_access_level !== levels[String(u.id)]);
  for (const user of changed) await user.update({ organisation_id: org.id, organisation_access_level: levels[String(user.id)] }, { transaction });
  await emitAll(transaction, changed.map((u) => ({ name: 'user.updated' as const, payload: { userId: u.id, sendEmail: false } })));
}

const fields = {
  brand_id: field.id(),
  customfield: customFieldValuesSchema(),
  country: personFields.country,
  language_code: personFields.language_code,
  timezone: personFields.timezone,
  notes: field.text(),
  // An empty value (`domain=`) clears the domains, as it clears a ticket's `tag` or `cc`.
  domain: Joi.array().items(oneLine(Joi.string().trim().normalize('NFC').lowercase().max(255)).domain({ tlds: false }).custom(canonicalDomain)).single().max(100).allow('', null),
  // Keyed by user id: any other key is refused, not dropped (`The selected access level.abc is invalid.`).
  access_level: Joi.object().pattern(/^\d{1,10}$/, field.flag()).pattern(/^/, Joi.any().custom((_v, helpers) => helpers.error('any.invalid'))),
};

/** Input fields stored as they are. */
const COLUMNS = ['name', 'country', 'language_code', 'timezone', 'notes'] as const;

export const organisationResource: ResourceDef<Organisation, OrganisationRelations> = {
  path: '/organisation',
  model: Organisation,
  label: 'organisation',
  counted: { kind: 'organisation', scopeFilter: 'brand_id' },
  sortable: ['name', 'brand_id', 'created_at', 'updated_at'],
  filters: {
    // A part of the name: the organisations holding its grams (migration 069), then its LIKE.
    search: {
      schema: field.string(),
      where: (v: string) => narrowedByGrams(ORGANISATION_GRAMS, v, sqlCondition`name LIKE ${likeContains(v)}`),
    },
    brand_id: equals('brand_id', field.id()),
    customfield: customFieldFilter('organisation'),
  },
  dates: true,
  createSchema: Joi.object({ name: field.string().required(), ...fields }),
  // Locked custom fields keep their value unless `overwrite_customfield_values` (as for users and tickets).
  updateSchema: Joi.object({ name: field.string(), ...fields, overwrite_customfield_values: field.flag().default(0) }),
  async create(input, { transaction }) {
    const brandId = input.brand_id ?? (await defaultBrandId(transaction));
    await assertExist(Brand, 'brand_id', brandId, transaction);
    if (input.domain) await assertDomainsFree(null, brandId, input.domain, true, transaction);
    await assertLanguage(input.language_code, transaction);
    const org = await Organisation.create({ brand_id: brandId, ...sent(input, COLUMNS) }, { transaction });
    // Users of the brand with an email at one of these domains join the organisation.
    if (input.domain) await setLinks(OrganisationDomain, { organisation_id: org.id, brand_id: org.brand_id }, 'domain', input.domain, transaction, { ordered: true, fresh: true });
    await applyAccessLevels(org, input.access_level, transaction);
    await applyCustomFieldValues('organisation', org.id, input.customfield, { brandId, creating: true, overwriteLocked: true, transaction });
    await emit(transaction, 'organisation.created', { organisationId: org.id });
    return org;
  },
  async update(org, input, { transaction, writesBefore = writeCount(transaction) }) {
    const brandId: number = input.brand_id ?? org.brand_id;
    if (brandId !== org.brand_id) {
      await assertExist(Brand, 'brand_id', brandId, transaction);
      if (await User.count({ where: { organisation_id: org.id }, transaction })) {
        throw new ValidationError('The brand of an organisation with users cannot be changed: its users must be of the same brand.');
      }
    }
    // An empty value (null) clears the domains.
    const domains: string[] | undefined = input.domain === undefined ? undefined : input.domain ?? [];
    if (domains || brandId !== org.brand_id) {
      // Without new domains, the current ones move with the organisation (the foreign key cascades).
      const kept = domains ?? (await OrganisationDomain.findAll({ where: { organisation_id: org.id }, attributes: ['domain'], transaction })).map((d) => d.domain);
      await assertDomainsFree(org.id, brandId, kept, !!domains, transaction);
    }
    await assertLanguage(input.language_code, transaction);
    // Domains that move to another brand with the organisation go first (the foreign key would
    // move them with it); else the list is compared first (sent unchanged, nothing is written).
    const moving = brandId !== org.brand_id;
    if (domains && moving) await OrganisationDomain.destroy({ where: { organisation_id: org.id }, transaction });
    await org.update({ ...sent(input, COLUMNS), brand_id: brandId }, { transaction });
    if (domains) await setLinks(OrganisationDomain, { organisation_id: org.id, brand_id: brandId }, 'domain', domains, transaction, { ordered: true, fresh: moving });
    await applyAccessLevels(org, input.access_level, transaction);
    await applyCustomFieldValues('organisation', org.id, input.customfield, { brandId: org.brand_id, creating: false, overwriteLocked: input.overwrite_customfield_values === 1, transaction });
    if (writeCount(transaction) > writesBefore) await emit(transaction, 'organisation.updated', { organisationId: org.id });
  },
  async destroy(org, { transaction }) {
    // Its users leave it (updated_at moves): a user.updated each, all in one INSERT of the feed
    // (emitAll). Not an INSERT ... SELECT: webhooks are subscribers of every event, and a row they
    // never see would be delivered to none. So the cost grows with the users, by one id read and
    // one feed row each, plus one delivery per subscribed webhook.
    const members = (await User.findAll({ attributes: ['id'], where: { organisation_id: org.id }, transaction })).map((u) => u.id);
    await User.update({ organisation_id: null, organisation_access_level: null }, { where: { organisation_id: org.id }, transaction });
    await deleteCustomFieldValues('organisation', org.id, transaction);
    await recordDeletions('organisations', [org.id], transaction);
    await org.destroy({ transaction });
    await emitAll(transaction, [
      ...members.map((userId) => ({ name: 'user.updated' as const, payload: { userId, sendEmail: false } })),
      { name: 'organisation.deleted' as const, payload: { organisationId: org.id } },
    ]);
  },
  async load(orgs) {
    const ids = orgs.map((o) => o.id);
    const [users, customfields, domains] = await Promise.all([
      // Just the summary columns: a page can embed hundreds of users.
      loadMany(User, 'organisation_id', ids, { where: { type: 'user' }, attributes: [...USER_SUMMARY_FIELDS] }) as Promise<Map<number, UserSummaryRow[]>>,
      loadCustomFieldValues(ids, 'organisation'),
      loadMany(OrganisationDomain, 'organisation_id', ids),
    ]);
    return { users, customfields, domains };
  },
  serialize: (org, rel) => ({
    ...pick(org, ORGANISATION_FIELDS),
    users: (rel.users.get(org.id) ?? []).map(serializeUserSummary),
    customfields: (rel.customfields.get(org.id) ?? []).map((v) => serializeCustomFieldValue(v, 'organisation_id')),
    domains: (rel.domains.get(org.id) ?? []).map((d) => d.domain),
  }),
};

export const organisationRouter = resourceRouter(organisationResource);
