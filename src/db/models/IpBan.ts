import { Column, DataType, Table } from 'sequelize-typescript';
import { Entity, flag } from '../entity';

@Table({ tableName: 'ip_bans' })
export class IpBan extends Entity {
  @Column({ type: DataType.STRING(45), allowNull: false }) declare ip: string;
  @Column(DataType.TEXT) declare reason: string | null;
  @Column(flag(1)) declare event_user: number;
  @Column(flag(1)) declare event_operator: number;
  @Column(flag(1)) declare event_api: number;
  /** 1 permanent, 0 temporary. */
  @Column(flag(1)) declare type: number;
  @Column(DataType.INTEGER.UNSIGNED) declare expiry: number | null;
}
