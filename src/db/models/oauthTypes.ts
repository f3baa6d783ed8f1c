/** How a mailbox or an SMTP account logs in (src/oauth). */
export const AUTH_TYPES = ['password', 'oauth2'] as const;
export type AuthType = typeof AUTH_TYPES[number];

/** OAuth2 providers: presets for Microsoft 365 and Google, or any token endpoint. */
export const OAUTH_PROVIDERS = ['microsoft', 'google', 'custom'] as const;
export type OAuthProvider = typeof OAUTH_PROVIDERS[number];
