import { Column, DataType, Table } from 'sequelize-typescript';
import { Entity } from '../entity';

/** The answer to one field of a feedback form. */
@Table({ tableName: 'ticket_feedback_values' })
export class TicketFeedbackValue extends Entity {
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false }) declare feedback_id: number;
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false }) declare field_id: number;
  @Column({ type: DataType.TEXT, allowNull: false }) declare value: string;
}
