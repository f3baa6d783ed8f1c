import { SECRET_MASK, assertSecretResent, resends, storedSecret } from '../crypto/storedSecret';
import { AUTH_TYPES, OAUTH_PROVIDERS } from '../db/models/oauthTypes';
import type { OAuthAccount } from '../db/models/oauthAccount';
import { ValidationError } from '../errors';
import { Joi, field } from '../lib/validation';
import { outboundUrl, refuseInternalName } from '../net/outbound';
import { TENANT_PATTERN, tokenUrl, type OAuthSettings } from './providers';

/**
 * The OAuth2 settings of an account that logs in to a mail server (a department mailbox, a brand's
 * SMTP), as the API takes and shows them: the same field names on both resources.
 *
 * `auth_type` password|oauth2; `oauth_provider` microsoft|google|custom; `oauth_client_id`;
 * `oauth_client_secret` and `oauth_refresh_token` (write-only: stored encrypted, shown as
 * SECRET_MASK when set; sending the mask back keeps them, an empty value removes them);
 * `oauth_tenant` (Microsoft); `oauth_token_url` (custom); `oauth_scope` (instead of the preset's).
 * Read-only `oauth_state`: when the access token expires, when it was last refreshed, the last
 * refresh error. Changing any setting drops the access token and the state.
 */

/** Where an account's columns live: secrets are bound to their table and column (crypto/secrets.ts). */
export type OAuthTable = 'department_emails' | 'brands';

/** The columns of an account (the same on both tables: db/models/oauthAccount.ts). */
export type OAuthColumns = Pick<OAuthAccount, 'auth_type' | 'oauth_provider' | 'oauth_client_id' | 'oauth_client_secret' | 'oauth_tenant'
  | 'oauth_token_url' | 'oauth_scope' | 'oauth_refresh_token' | 'oauth_access_token' | 'oauth_expires_at' | 'oauth_last_refreshed_at'
  | 'oauth_last_error' | 'oauth_last_error_at'>;

export const secretPurpose = (table: OAuthTable, column: 'oauth_client_secret' | 'oauth_refresh_token' | 'oauth_access_token') => `${table}.${column}`;

/** The joi fields of both resources' create and update. */
export const oauthFields = {
  auth_type: Joi.string().valid(...AUTH_TYPES)
    .description('How the account logs in: `password`, or `oauth2` (XOAUTH2/OAUTHBEARER with the oauth_* fields). Responses add the read-only `oauth_state` '
      + '(null for password): `expires_at` of the current access token, `last_refreshed_at`, `last_error` and `last_error_at` of the last failed refresh.'),
  oauth_provider: Joi.string().valid(...OAUTH_PROVIDERS).allow('', null)
    .description('`microsoft` (Microsoft 365: token endpoint of `oauth_tenant`), `google`, or `custom` (`oauth_token_url`). Required with oauth2.'),
  oauth_client_id: field.nullable(255).description('The OAuth2 client (application) id. Required with oauth2.'),
  // Not trimmed, like passwords.
  oauth_client_secret: Joi.string().max(1024).allow('', null)
    .description(`The client secret: write-only, stored encrypted, returned as \`${SECRET_MASK}\` (sending that back keeps it; empty removes it).`),
  oauth_tenant: field.nullable(255).pattern(TENANT_PATTERN, 'tenant')
    .description('Microsoft 365: the directory (tenant) id or a verified domain, or `organizations`. Required with the microsoft provider.'),
  oauth_token_url: outboundUrl('oauth-token', 'oauth token url').allow('', null)
    .description('The token endpoint (custom provider; required there). Responses show the endpoint in use. Internal addresses only when OUTBOUND_ALLOW_HOSTS lists them.'),
  oauth_scope: field.nullable(1024).description('Scopes asked for at each refresh, instead of the preset\'s (Microsoft: the protocol\'s scope and offline_access; Google: https://mail.google.com/).'),
  oauth_refresh_token: Joi.string().trim().max(8192).allow('', null)
    .description(`The refresh token from the administrator's consent: write-only, stored encrypted (replaced when the provider rotates it), returned as \`${SECRET_MASK}\`. Required with oauth2.`),
};

const PLAIN = ['auth_type', 'oauth_provider', 'oauth_client_id', 'oauth_tenant', 'oauth_token_url', 'oauth_scope'] as const;
const SECRETS = ['oauth_client_secret', 'oauth_refresh_token'] as const;

const encrypted = (table: OAuthTable, column: typeof SECRETS[number], sent: string | null | undefined) =>
  storedSecret(sent, secretPurpose(table, column), 'The OAuth2 settings cannot be stored: the server has no SECRET_KEY to encrypt them with.');

/**
 * The columns to write for the OAuth2 fields of a request (`current`: the stored account, null on
 * create). A change to any of them drops the access token and the state: the next login asks the
 * provider again with the new settings.
 */
export function oauthChanges(table: OAuthTable, input: Record<string, any>, current: Partial<OAuthColumns> | null): Partial<OAuthColumns> {
  const values: Record<string, unknown> = {};
  for (const k of PLAIN) if (input[k] !== undefined) values[k] = input[k] === '' ? null : input[k];
  // The stored account's values (a model's are behind getters, which a spread does not copy).
  const plain = (current as { get?: (o: { plain: true }) => Partial<OAuthColumns> } | null)?.get?.({ plain: true }) ?? current;
  // Responses show a preset's endpoint as oauth_token_url: a client that sends back what it read changes nothing.
  const merged = { ...plain, ...values } as OAuthSettings;
  if (merged.oauth_provider !== 'custom' && values.oauth_token_url && values.oauth_token_url === tokenUrl(merged)) {
    if (current) delete values.oauth_token_url;
    else values.oauth_token_url = null;
  }
  // A URL the provider's preset would ignore (it has its own endpoint) is refused, not stored unused.
  if (values.oauth_token_url && merged.oauth_provider !== 'custom') {
    throw new ValidationError('The oauth token url field is taken only when the oauth provider is custom.');
  }
  for (const k of SECRETS) {
    const v = encrypted(table, k, input[k]);
    if (v !== undefined) values[k] = v;
  }
  const stored = (current ?? {}) as Record<string, unknown>;
  // The client secret and the refresh token are sent to the token endpoint: another endpoint
  // (provider, tenant or URL) must come with them again.
  if (current && (current.auth_type === 'oauth2' || values.auth_type === 'oauth2')) {
    const endpointChanged = tokenUrl(merged) !== tokenUrl(current as OAuthSettings) ? ['oauth_token_url'] : [];
    for (const k of SECRETS) assertSecretResent(k, endpointChanged, !!stored[k], resends(input[k]));
  }
  const changed = Object.keys(values).some((k) => values[k] !== (stored[k] ?? null));
  if (changed && current) Object.assign(values, { oauth_access_token: null, oauth_expires_at: null, oauth_last_error: null, oauth_last_error_at: null });
  return values as Partial<OAuthColumns>;
}

/** A token endpoint named by a host that resolves to an internal address is refused on write, as a webhook's is. */
export async function refuseInternalTokenUrl(input: { oauth_token_url?: string | null }): Promise<void> {
  if (input.oauth_token_url) await refuseInternalName(input.oauth_token_url, 'oauth-token', 'oauth token url');
}

/** An account set to oauth2 has what a refresh needs (`merged`: the stored values with the changes). */
export function assertOAuthComplete(merged: Partial<OAuthColumns>): void {
  if (merged.auth_type !== 'oauth2') return;
  const required = (name: keyof OAuthColumns, when = 'auth type is oauth2') => {
    if (!merged[name]) throw new ValidationError(`The ${name.replace(/_/g, ' ')} field is required when ${when}.`);
  };
  required('oauth_provider');
  required('oauth_client_id');
  required('oauth_refresh_token');
  if (merged.oauth_provider === 'microsoft') required('oauth_tenant', 'oauth provider is microsoft');
  if (merged.oauth_provider === 'custom') required('oauth_token_url', 'oauth provider is custom');
}

/** The OAuth2 fields of a response: secrets masked, the state read-only (null for password logins). */
export function oauthView(a: OAuthColumns): Record<string, unknown> {
  return {
    auth_type: a.auth_type,
    oauth_provider: a.oauth_provider,
    oauth_client_id: a.oauth_client_id,
    oauth_client_secret: a.oauth_client_secret ? SECRET_MASK : null,
    oauth_tenant: a.oauth_tenant,
    oauth_token_url: a.auth_type === 'oauth2' ? tokenUrl(a) : a.oauth_token_url,
    oauth_scope: a.oauth_scope,
    oauth_refresh_token: a.oauth_refresh_token ? SECRET_MASK : null,
    oauth_state: a.auth_type === 'oauth2'
      ? { expires_at: a.oauth_expires_at, last_refreshed_at: a.oauth_last_refreshed_at, last_error: a.oauth_last_error, last_error_at: a.oauth_last_error_at }
      : null,
  };
}
