import { Column, DataType, Table } from 'sequelize-typescript';
import { Entity, flag } from '../entity';

@Table({ tableName: 'departments' })
export class Department extends Entity {
  @Column({ type: DataType.STRING(255), allowNull: false }) declare name: string;
  @Column(DataType.TEXT) declare description: string | null;
  @Column({ type: DataType.INTEGER, allowNull: false, defaultValue: 0 }) declare order: number;
  @Column(DataType.INTEGER.UNSIGNED) declare parent_id: number | null;
  @Column(flag(1)) declare public: number;
  @Column(flag(0)) declare registered_only: number;
  @Column(DataType.STRING(255)) declare ticket_number_format: string | null;
  @Column(DataType.INTEGER.UNSIGNED) declare default_assignedto: number | null;
  @Column(flag(1)) declare notify_frontend_ticket: number;
  @Column(flag(1)) declare notify_email_ticket: number;
  @Column(flag(1)) declare notify_operators: number;
  @Column(flag(0)) declare disable_user_email_replies: number;
  /** JSON object: template key → email template id (-1 none). */
  @Column(DataType.TEXT) declare email_templates: string | null;
}
