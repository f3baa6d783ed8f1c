import { Column, DataType, Table } from 'sequelize-typescript';
import { Entity } from '../entity';

export type WebhookDeliveryStatus = 'pending' | 'succeeded' | 'failed' | 'skipped';

/** One event sent to one webhook: its attempts and their outcome. */
@Table({ tableName: 'webhook_deliveries' })
export class WebhookDelivery extends Entity {
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false }) declare webhook_id: number;
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false }) declare event_id: number;
  /** The X-Helpdesk-Delivery header: the same at every attempt and redelivery. */
  @Column({ type: DataType.CHAR(36), allowNull: false }) declare uuid: string;
  @Column({ type: DataType.STRING(64), allowNull: false }) declare event_name: string;
  @Column({ type: DataType.STRING(16), allowNull: false }) declare status: WebhookDeliveryStatus;
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false }) declare attempts: number;
  @Column(DataType.SMALLINT.UNSIGNED) declare response_code: number | null;
  @Column(DataType.TEXT) declare error: string | null;
  @Column(DataType.INTEGER.UNSIGNED) declare last_attempt_at: number | null;
  @Column(DataType.INTEGER.UNSIGNED) declare delivered_at: number | null;
}
