import { Column, DataType, Table } from 'sequelize-typescript';
import { Entity } from '../entity';

/** A mail the mail catcher's SMTP server received (src/mailcatcher). */
@Table({ tableName: 'caught_mails' })
export class CaughtMail extends Entity {
  /** The envelope's sender (MAIL FROM). */
  @Column(DataType.STRING(998)) declare mail_from: string | null;
  /** The envelope's recipients (RCPT TO), comma-separated. */
  @Column({ type: DataType.STRING(4096), allowNull: false }) declare rcpt_to: string;
  @Column(DataType.STRING(998)) declare subject: string | null;
  @Column(DataType.STRING(998)) declare message_id: string | null;
  @Column(DataType.TEXT('medium')) declare text: string | null;
  @Column(DataType.TEXT('medium')) declare html: string | null;
  /** The header block as received. */
  @Column(DataType.TEXT('medium')) declare headers: string | null;
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false }) declare size: number;
}
