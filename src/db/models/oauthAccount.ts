import { Column, DataType } from 'sequelize-typescript';
import { Entity } from '../entity';
import type { AuthType, OAuthProvider } from './oauthTypes';

/**
 * The columns of an account that logs in to a mail server (a brand's SMTP, a department's
 * mailbox): with a password, or with OAuth2 (src/oauth). Both tables have them (migration 022).
 */
export abstract class OAuthAccount extends Entity {
  /** `password` or `oauth2` (XOAUTH2/OAUTHBEARER with the oauth_* settings below; src/oauth). */
  @Column({ type: DataType.STRING(16), allowNull: false, defaultValue: 'password' }) declare auth_type: AuthType;
  @Column(DataType.STRING(16)) declare oauth_provider: OAuthProvider | null;
  @Column(DataType.STRING(255)) declare oauth_client_id: string | null;
  /** Encrypted, like the tokens (crypto/secrets.ts); never returned. */
  @Column(DataType.STRING(2048)) declare oauth_client_secret: string | null;
  @Column(DataType.STRING(255)) declare oauth_tenant: string | null;
  @Column(DataType.STRING(2048)) declare oauth_token_url: string | null;
  @Column(DataType.STRING(1024)) declare oauth_scope: string | null;
  @Column(DataType.TEXT) declare oauth_refresh_token: string | null;
  /** The current access token (encrypted) and when it expires (UNIX seconds). */
  @Column(DataType.TEXT) declare oauth_access_token: string | null;
  @Column(DataType.INTEGER.UNSIGNED) declare oauth_expires_at: number | null;
  @Column(DataType.INTEGER.UNSIGNED) declare oauth_last_refreshed_at: number | null;
  @Column(DataType.TEXT) declare oauth_last_error: string | null;
  @Column(DataType.INTEGER.UNSIGNED) declare oauth_last_error_at: number | null;
}
