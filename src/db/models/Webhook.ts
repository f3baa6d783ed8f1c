import { Column, DataType, Table } from 'sequelize-typescript';
import { Entity, flag } from '../entity';

/** A URL subscribed to event types; its signing secret is stored encrypted (crypto/secrets.ts). */
@Table({ tableName: 'webhooks' })
export class Webhook extends Entity {
  @Column({ type: DataType.STRING(2048), allowNull: false }) declare url: string;
  @Column(DataType.STRING(255)) declare description: string | null;
  /** JSON array of event names, or `["*"]`. */
  @Column({ type: DataType.TEXT, allowNull: false }) declare events: string;
  @Column({ type: DataType.STRING(512), allowNull: false }) declare secret: string;
  @Column(flag(1)) declare enabled: number;
}
