import { Column, DataType, Table } from 'sequelize-typescript';
import { Entity, flag } from '../entity';
import type { AuthType, OAuthProvider } from './oauthTypes';

@Table({ tableName: 'brands' })
export class Brand extends Entity {
  @Column({ type: DataType.STRING(255), allowNull: false }) declare name: string;
  @Column(flag(1)) declare enabled: number;
  @Column(DataType.STRING(255)) declare system_url: string | null;
  @Column(DataType.STRING(255)) declare frontend_logo: string | null;
  @Column({ type: DataType.STRING(64), allowNull: false, defaultValue: 'default' }) declare frontend_template: string;
  @Column(DataType.STRING(255)) declare default_email: string | null;
  @Column(DataType.TEXT) declare global_email_header: string | null;
  @Column(DataType.TEXT) declare global_email_footer: string | null;
  @Column({ type: DataType.STRING(16), allowNull: false, defaultValue: 'smtp' }) declare email_method: string;
  @Column(DataType.STRING(255)) declare smtp_host: string | null;
  @Column(DataType.INTEGER.UNSIGNED) declare smtp_port: number | null;
  @Column(DataType.STRING(8)) declare smtp_encryption: string | null;
  @Column(flag(0)) declare smtp_requires_auth: number;
  @Column(DataType.STRING(255)) declare smtp_username: string | null;
  @Column(DataType.STRING(255)) declare smtp_password: string | null;
  @Column({ type: DataType.STRING(64), allowNull: false, defaultValue: 'default' }) declare default_country: string;
  @Column({ type: DataType.STRING(64), allowNull: false, defaultValue: 'default' }) declare default_timezone: string;
  @Column({ type: DataType.STRING(64), allowNull: false, defaultValue: 'default' }) declare date_format: string;
  @Column({ type: DataType.STRING(64), allowNull: false, defaultValue: 'default' }) declare time_format: string;
  @Column({ type: DataType.STRING(64), allowNull: false, defaultValue: 'default' }) declare default_language: string;
  @Column({ type: DataType.INTEGER, allowNull: false, defaultValue: -1 }) declare language_toggle: number;
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
