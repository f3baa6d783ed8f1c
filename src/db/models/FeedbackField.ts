import { Column, DataType, Table } from 'sequelize-typescript';
import { Entity } from '../entity';

/** A question of a feedback form; `type` is a custom field type (8 Text, 9 Textarea, ...). */
@Table({ tableName: 'feedback_fields' })
export class FeedbackField extends Entity {
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false }) declare form_id: number;
  @Column({ type: DataType.STRING(255), allowNull: false }) declare name: string;
  @Column({ type: DataType.TINYINT.UNSIGNED, allowNull: false }) declare type: number;
  @Column({ type: DataType.INTEGER, allowNull: false, defaultValue: 0 }) declare order: number;
}
