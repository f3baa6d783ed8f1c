import { Column, DataType, Table } from 'sequelize-typescript';
import { Entity, flag } from '../entity';

@Table({ tableName: 'ip_whitelist' })
export class IpWhitelist extends Entity {
  @Column({ type: DataType.STRING(45), allowNull: false }) declare ip: string;
  @Column(DataType.TEXT) declare description: string | null;
  @Column(flag(1)) declare event_user: number;
  @Column(flag(1)) declare event_operator: number;
  @Column(flag(1)) declare event_api: number;
}
