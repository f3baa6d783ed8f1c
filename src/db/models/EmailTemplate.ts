import { Column, DataType, Table } from 'sequelize-typescript';
import { Entity } from '../entity';

/** A mail template (`name` is its key, e.g. user_ticket_opened); brand_id null: every brand. */
@Table({ tableName: 'email_templates' })
export class EmailTemplate extends Entity {
  @Column(DataType.INTEGER.UNSIGNED) declare brand_id: number | null;
  @Column({ type: DataType.STRING(64), allowNull: false }) declare name: string;
  @Column(DataType.TEXT) declare description: string | null;
  @Column({ type: DataType.STRING(255), allowNull: false }) declare subject: string;
  @Column({ type: DataType.TEXT('medium'), allowNull: false }) declare contents: string;
}
