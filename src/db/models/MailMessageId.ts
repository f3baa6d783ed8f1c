import { AutoIncrement, Column, DataType, Model, PrimaryKey, Table } from 'sequelize-typescript';

export type MailDirection = 'out' | 'in';

/**
 * Whose conversation a mail is (migration 036): the ticket's user and CC addresses, the CC
 * addresses alone (`cc`: the copy of a user's reply, which its user wrote and is not sent),
 * everyone but its author (`others`: the copy of a reply by someone else than the ticket's user),
 * the ticket's user alone (`owner`: a feedback request), one operator, or a forward's recipients. Null
 * for mails sent before it was stored.
 */
export type MailAudience = 'user' | 'cc' | 'others' | 'owner' | 'forward' | `operator:${number}`;

/**
 * The Message-ID of a mail of a ticket (without angle brackets): every mail the help desk sends
 * (`out`), and the mails the mailbox worker imports (`in`). A reply naming one of them in
 * In-Reply-To or References belongs to its ticket; a mail sent names those of its own audience.
 */
@Table({ tableName: 'mail_message_ids' })
export class MailMessageId extends Model {
  @PrimaryKey @AutoIncrement @Column(DataType.INTEGER.UNSIGNED) declare id: number;
  @Column({ type: DataType.STRING(255), allowNull: false }) declare message_id: string;
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false }) declare ticket_id: number;
  @Column(DataType.INTEGER.UNSIGNED) declare ticket_message_id: number | null;
  @Column({ type: DataType.STRING(3), allowNull: false }) declare direction: MailDirection;
  @Column(DataType.STRING(40)) declare audience: MailAudience | null;
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false }) declare created_at: number;
}
