import { Column, DataType, Table } from 'sequelize-typescript';
import { Entity, flag } from '../entity';

export type UserType = 'user' | 'operator';

/** Users (customers) and operators (staff) share this table; `type` tells them apart. */
@Table({ tableName: 'users' })
export class User extends Entity {
  @Column({ type: DataType.STRING(8), allowNull: false }) declare type: UserType;
  @Column(DataType.INTEGER.UNSIGNED) declare brand_id: number | null;
  @Column(DataType.STRING(255)) declare firstname: string | null;
  @Column(DataType.STRING(255)) declare lastname: string | null;
  @Column({ type: DataType.STRING(255), allowNull: false }) declare email: string;
  /** A password hash (argon2id), never returned. */
  @Column(DataType.STRING(255)) declare password: string | null;
  @Column(flag(0)) declare email_verified: number;
  @Column(flag(1)) declare active: number;
  @Column(DataType.INTEGER.UNSIGNED) declare organisation_id: number | null;
  /** 0 Manager, 1 User. */
  @Column(DataType.TINYINT.UNSIGNED) declare organisation_access_level: number | null;
  @Column(flag(1)) declare organisation_notifications: number;
  @Column(DataType.STRING(2)) declare country: string | null;
  @Column(DataType.STRING(10)) declare language_code: string | null;
  @Column(DataType.STRING(64)) declare timezone: string | null;
  @Column(DataType.STRING(255)) declare avatar: string | null;
  @Column(flag(0)) declare twofa_enabled: number;
  @Column(DataType.STRING(255)) declare twofa_secret: string | null;
  @Column(DataType.STRING(255)) declare twofa_token: string | null;
  @Column(DataType.STRING(64)) declare twitter_id: string | null;
  @Column(DataType.STRING(64)) declare twitter_handle: string | null;
  @Column(DataType.STRING(64)) declare facebook_id: string | null;
}
