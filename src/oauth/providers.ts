import type { OAuthProvider } from '../db/models/oauthTypes';

/**
 * The provider presets: where a refresh token is exchanged, and the scopes asked for. Microsoft
 * 365's endpoint is per directory (`tenant`: its id or a verified domain, or `organizations`);
 * its scopes name the protocol. Google has one endpoint and one mail scope. `custom` is any token
 * endpoint, with the scope the administrator gives (none by default).
 */

/** What the token is for: the protocol that presents it. */
export type OAuthUse = 'imap' | 'pop3' | 'smtp';

export const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';
export const microsoftTokenUrl = (tenant: string) => `https://login.microsoftonline.com/${encodeURIComponent(tenant)}/oauth2/v2.0/token`;

const MICROSOFT_SCOPE: Record<OAuthUse, string> = {
  imap: 'https://outlook.office.com/IMAP.AccessAsUser.All',
  pop3: 'https://outlook.office.com/POP.AccessAsUser.All',
  smtp: 'https://outlook.office.com/SMTP.Send',
};

/** A tenant as Microsoft names one: a GUID, a domain, or common/organizations/consumers. */
export const TENANT_PATTERN = /^[A-Za-z0-9](?:[A-Za-z0-9.-]{0,253}[A-Za-z0-9])?$/;

export interface OAuthSettings {
  oauth_provider: OAuthProvider | null;
  oauth_tenant: string | null;
  oauth_token_url: string | null;
  oauth_scope: string | null;
}

/** The token endpoint of the settings (null when they are incomplete). */
export function tokenUrl(s: OAuthSettings): string | null {
  if (s.oauth_provider === 'google') return GOOGLE_TOKEN_URL;
  if (s.oauth_provider === 'microsoft') return s.oauth_tenant ? microsoftTokenUrl(s.oauth_tenant) : null;
  return s.oauth_token_url || null;
}

/** The scope asked for with each refresh: the administrator's, else the preset's for the use. */
export function scopeFor(s: OAuthSettings, use: OAuthUse): string | null {
  if (s.oauth_scope) return s.oauth_scope;
  if (s.oauth_provider === 'microsoft') return `${MICROSOFT_SCOPE[use]} offline_access`;
  if (s.oauth_provider === 'google') return 'https://mail.google.com/';
  return null;
}
