import { Column, DataType, Table } from 'sequelize-typescript';
import { Entity } from '../entity';

/** What the mailbox worker decided about a mail (see src/mailbox/ingest.ts). */
export const INCOMING_DECISIONS = ['new_ticket', 'reply', 'duplicate', 'loop', 'bounce', 'spam', 'rejected', 'error'] as const;
export type IncomingDecision = (typeof INCOMING_DECISIONS)[number];

/** The ingestion ledger: one row per mail fetched from a department mailbox. */
@Table({ tableName: 'incoming_mails' })
export class IncomingMail extends Entity {
  @Column(DataType.INTEGER.UNSIGNED) declare department_email_id: number | null;
  @Column(DataType.STRING(128)) declare remote_uid: string | null;
  @Column(DataType.STRING(255)) declare message_id: string | null;
  /** Set on the row of the mail that was imported: unique, so a mail imports once. */
  @Column(DataType.STRING(255)) declare import_key: string | null;
  @Column(DataType.STRING(255)) declare from_address: string | null;
  @Column(DataType.STRING(998)) declare subject: string | null;
  @Column({ type: DataType.STRING(16), allowNull: false }) declare decision: IncomingDecision;
  @Column(DataType.STRING(1024)) declare reason: string | null;
  @Column(DataType.INTEGER.UNSIGNED) declare ticket_id: number | null;
  @Column(DataType.INTEGER.UNSIGNED) declare ticket_message_id: number | null;
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false }) declare size: number;
}
