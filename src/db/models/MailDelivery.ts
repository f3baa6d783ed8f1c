import { Column, DataType, Table } from 'sequelize-typescript';
import { Entity } from '../entity';

/** `bounced`: the SMTP server took it, and a delivery report came back for it later (the mailbox worker). */
export type MailDeliveryStatus = 'queued' | 'sent' | 'failed' | 'skipped' | 'bounced';

/** What the mail worker did with one outbox entry of the mail queue (no row: not tried yet). */
@Table({ tableName: 'mail_deliveries' })
export class MailDelivery extends Entity {
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false }) declare outbox_id: number;
  @Column({ type: DataType.STRING(16), allowNull: false }) declare status: MailDeliveryStatus;
  @Column(DataType.STRING(1024)) declare recipients: string | null;
  @Column(DataType.STRING(998)) declare subject: string | null;
  @Column(DataType.STRING(255)) declare message_id: string | null;
  /** The SMTP server's answer to the message (`250 OK ...`, or its refusal). */
  @Column(DataType.TEXT) declare smtp_response: string | null;
  @Column(DataType.TEXT) declare error: string | null;
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false }) declare attempts: number;
  @Column(DataType.INTEGER.UNSIGNED) declare sent_at: number | null;
  @Column(DataType.INTEGER.UNSIGNED) declare failed_at: number | null;
}
