import { Column, DataType, Table } from 'sequelize-typescript';
import { flag } from '../entity';
import { OAuthAccount } from './oauthAccount';

@Table({ tableName: 'brands' })
export class Brand extends OAuthAccount {
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
  /** `v1:<key id>:<base64>` (crypto/secrets.ts, BRAND_SMTP_PASSWORD); a value written before migration 039 is the password itself until its next write. */
  @Column(DataType.STRING(2048)) declare smtp_password: string | null;
  @Column({ type: DataType.STRING(64), allowNull: false, defaultValue: 'default' }) declare default_country: string;
  @Column({ type: DataType.STRING(64), allowNull: false, defaultValue: 'default' }) declare default_timezone: string;
  @Column({ type: DataType.STRING(64), allowNull: false, defaultValue: 'default' }) declare date_format: string;
  @Column({ type: DataType.STRING(64), allowNull: false, defaultValue: 'default' }) declare time_format: string;
  @Column({ type: DataType.STRING(64), allowNull: false, defaultValue: 'default' }) declare default_language: string;
  @Column({ type: DataType.INTEGER, allowNull: false, defaultValue: -1 }) declare language_toggle: number;
}
