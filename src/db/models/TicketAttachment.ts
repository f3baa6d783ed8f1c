import { Column, DataType, Table } from 'sequelize-typescript';
import { Entity } from '../entity';

/** A file attached to a ticket's message: the upload (by hash) under the name it was attached with. */
@Table({ tableName: 'ticket_attachments' })
export class TicketAttachment extends Entity {
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false }) declare ticket_id: number;
  @Column(DataType.INTEGER.UNSIGNED) declare message_id: number | null;
  @Column({ type: DataType.CHAR(64), allowNull: false }) declare upload_hash: string;
  @Column({ type: DataType.STRING(255), allowNull: false }) declare original_name: string;
}
