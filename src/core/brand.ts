import { Brand } from '../db/models';
import { ValidationError } from '../errors';
import { isCountry } from '../lib/countries';
import { flagFilter } from '../http/listQuery';
import { resourceRouter, type ResourceDef } from '../http/resource';
import { pick } from '../lib/serialize';
import { isTimeZone } from '../lib/timezones';
import { Joi, field } from '../lib/validation';
import { assertEnabledLanguage } from './enabledLanguage';
import { mailServerHost } from '../net/outbound';
import { assertOAuthComplete, oauthChanges, oauthFields, oauthView, refuseInternalTokenUrl } from '../oauth/settings';
import { SECRET_MASK, assertSecretResent, resends, revealSecret, storedSecret } from '../crypto/storedSecret';
import { BRAND_SMTP_PASSWORD } from '../crypto/secrets';
import { logger } from '../logger';
import { storedHtml } from '../content/html';

/** `default` (the system default applies), or a real code that `check` accepts, as `normalise` writes it. */
const defaultOr = (check: (v: string) => boolean, normalise = (v: string) => v) => field.string(64)
  .custom((v: string, helpers) => (v === 'default' ? v : check(normalise(v)) ? normalise(v) : helpers.error('any.invalid')));

export const BRAND_FIELDS = [
  'id', 'name', 'enabled', 'system_url', 'frontend_logo', 'frontend_template', 'default_email', 'global_email_header',
  'global_email_footer', 'email_method', 'smtp_host', 'smtp_port', 'smtp_encryption', 'smtp_requires_auth', 'smtp_username',
  'smtp_password', 'default_country', 'default_timezone', 'date_format', 'time_format', 'default_language', 'language_toggle',
  'created_at', 'updated_at',
] as const;

const fields = {
  enabled: field.flag(),
  system_url: Joi.string().trim().max(255).uri({ scheme: ['http', 'https'] }).allow('', null),
  frontend_logo: field.nullable(),
  frontend_template: field.string(64),
  default_email: field.email().allow('', null),
  // HTML that frames every mail the brand sends: sanitised on write as rich text is (and again when sent).
  global_email_header: field.text().custom((v: string) => storedHtml(v)),
  global_email_footer: field.text().custom((v: string) => storedHtml(v)),
  email_method: Joi.string().valid('smtp'),
  smtp_host: Joi.string().trim().max(255).hostname().allow('', null).custom(mailServerHost),
  smtp_port: Joi.number().integer().min(1).max(65535).allow(null),
  // Empty: none (plain SMTP); ssl: TLS from the first byte; tls: STARTTLS required.
  smtp_encryption: Joi.string().valid('ssl', 'tls').allow('', null),
  smtp_requires_auth: field.flag(),
  smtp_username: field.nullable(),
  // Stored encrypted (crypto/secrets.ts, BRAND_SMTP_PASSWORD); responses show it as sent.
  smtp_password: Joi.string().max(255).allow('', null),
  default_country: defaultOr(isCountry, (v) => v.toUpperCase()),
  default_timezone: defaultOr(isTimeZone),
  date_format: field.string(64),
  time_format: field.string(64),
  // `default` or an enabled language (checked in create and update).
  default_language: defaultOr((v) => /^[a-z]{2}$/.test(v), (v) => v.toLowerCase()),
  language_toggle: Joi.number().integer().min(-1).max(1000),
  // SMTP with XOAUTH2 (auth_type oauth2, smtp_username the account): src/oauth/settings.ts.
  ...oauthFields,
};

/** The request without its OAuth2 fields (written through oauthChanges: secrets encrypted). */
const withoutOAuth = (input: Record<string, any>) => Object.fromEntries(Object.entries(input).filter(([k]) => !(k in oauthFields)));

/** SMTP with OAuth2 logs in as smtp_username. */
function assertOAuthUser(merged: Partial<Brand>): void {
  assertOAuthComplete(merged);
  if (merged.auth_type === 'oauth2' && !merged.smtp_username) throw new ValidationError('The smtp username field is required when auth type is oauth2.');
}

/**
 * A brand as every response shows it (its own endpoints, and a self-service type's `brand`).
 * `withSmtpSecrets` false masks the SMTP login: a brand embedded in another area's response, read
 * with a token that may not read the brand itself (no core scope), shows that a login is set,
 * never what it is.
 */
export const presentBrand = (b: Brand, withSmtpSecrets = true): Record<string, unknown> => {
  const out: Record<string, unknown> = { ...pick(b, BRAND_FIELDS), ...oauthView(b) };
  if (!withSmtpSecrets) {
    out.smtp_username = b.smtp_username ? SECRET_MASK : null;
    out.smtp_password = b.smtp_password ? SECRET_MASK : null;
  } else {
    out.smtp_password = shownPassword(b);
  }
  return out;
};

/** The SMTP password as sent (it is stored encrypted); one that no configured key decrypts shows as set, unreadable. */
function shownPassword(b: Brand): string | null {
  try {
    return revealSecret(b.smtp_password, BRAND_SMTP_PASSWORD);
  } catch (err) {
    logger.warn({ brandId: b.id, reason: (err as Error).message }, 'a brand\'s SMTP password does not decrypt');
    return SECRET_MASK;
  }
}

/** The stored form of a sent SMTP password: undefined (absent, or the mask) keeps it, null (or '') removes it. */
const storedPassword = (sent: string | null | undefined) =>
  storedSecret(sent, BRAND_SMTP_PASSWORD, 'The smtp password cannot be stored: the server has no SECRET_KEY to encrypt it with.');

/**
 * The columns of a create or update (`current`: the brand updated): the OAuth2 fields go through
 * oauthChanges, the SMTP password is encrypted. The password stored, sent again, is no change (a
 * new encryption of it would move updated_at for nothing).
 */
function columnsOf(input: Record<string, any>, current?: Brand): Record<string, unknown> {
  const { smtp_password: sent, ...values } = withoutOAuth(input);
  if (current && sent && current.smtp_password && sent === shownPassword(current)) return values;
  const password = storedPassword(sent);
  return password === undefined ? values : { ...values, smtp_password: password };
}

/** Brands: list and show are the spec's; create and update let integrators set SMTP settings. */
export const brandResource: ResourceDef<Brand> = {
  path: '/brand',
  model: Brand,
  label: 'brand',
  actions: ['list', 'show', 'create', 'update'],
  sortable: ['name', 'enabled', 'created_at', 'updated_at'],
  filters: { enabled: flagFilter('enabled') },
  createSchema: Joi.object({ name: field.string().required(), ...fields, enabled: field.flag().default(1), email_method: fields.email_method.default('smtp') }),
  updateSchema: Joi.object({ name: field.string(), ...fields }),
  serialize: (brand) => presentBrand(brand),
  async create(input, { transaction }) {
    if (input.default_language !== 'default') await assertEnabledLanguage('default_language', input.default_language, transaction);
    await refuseInternalTokenUrl(input);
    const oauth = { auth_type: 'password' as const, ...oauthChanges('brands', input, null) };
    const values = { ...columnsOf(input), ...oauth };
    assertOAuthUser(values);
    return Brand.create(values, { transaction });
  },
  async update(brand, input, { transaction }) {
    if (input.default_language !== 'default') await assertEnabledLanguage('default_language', input.default_language, transaction);
    await refuseInternalTokenUrl(input);
    const values = { ...columnsOf(input, brand), ...oauthChanges('brands', input, brand) };
    assertOAuthUser({ ...brand.get({ plain: true }), ...values });
    // With OAuth2 the SMTP login is an access token of the refresh token: another server, port or
    // encryption takes the refresh token again (departmentEmail.ts, the same rule). The SMTP
    // password is not asked again: the brand's own responses show it to whoever may write them.
    if (((values as Partial<Brand>).auth_type ?? brand.auth_type) === 'oauth2') {
      const where = ['smtp_host', 'smtp_port', 'smtp_encryption'].filter((k) => k in values && (values as any)[k] !== (brand as any)[k]);
      assertSecretResent('oauth_refresh_token', where, !!brand.oauth_refresh_token, resends(input.oauth_refresh_token));
    }
    await brand.update(values, { transaction });
  },
};

export const brandRouter = resourceRouter(brandResource);
