import { Column, DataType, Table } from 'sequelize-typescript';
import { Entity } from '../entity';

/** A feedback form sent `time_after_resolved` seconds after a ticket is resolved; `expiry_time` seconds to answer (0: never expires). */
@Table({ tableName: 'feedback_forms' })
export class FeedbackForm extends Entity {
  @Column({ type: DataType.STRING(255), allowNull: false }) declare name: string;
  @Column(DataType.TEXT) declare description: string | null;
  @Column({ type: DataType.INTEGER, allowNull: false, defaultValue: 0 }) declare order: number;
  @Column(DataType.INTEGER.UNSIGNED) declare email_template_id: number | null;
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false, defaultValue: 604800 }) declare expiry_time: number;
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false, defaultValue: 86400 }) declare time_after_resolved: number;
  @Column({ type: DataType.TINYINT.UNSIGNED, allowNull: false, defaultValue: 0 }) declare condition_group_type: number;
}
