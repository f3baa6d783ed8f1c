import { Column, DataType, Table } from 'sequelize-typescript';
import { Entity } from '../entity';

/** A feedback request of a ticket and its answer: rating null (unrated), 0 bad, 1 good, 2 neutral. */
@Table({ tableName: 'ticket_feedback' })
export class TicketFeedback extends Entity {
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false }) declare ticket_id: number;
  /** The ticket's user. */
  @Column(DataType.INTEGER.UNSIGNED) declare user_id: number | null;
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false }) declare form_id: number;
  @Column(DataType.TINYINT.UNSIGNED) declare rating: number | null;
  /** 32 random characters: the user's link to the form. */
  @Column({ type: DataType.CHAR(32), allowNull: false }) declare token: string;
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false, defaultValue: 0 }) declare fields_answered: number;
  @Column(DataType.INTEGER.UNSIGNED) declare expiry_time: number | null;
  /** The ticket's resolved_time this request was made for (one request per resolution); null for requests made otherwise. */
  @Column(DataType.INTEGER.UNSIGNED) declare resolved_time: number | null;
}
