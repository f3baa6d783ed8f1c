import { Column, DataType, Table } from 'sequelize-typescript';
import { Entity } from '../entity';

/** A ticket priority, offered in the departments of `priority_departments` (none: every department). */
@Table({ tableName: 'ticket_priorities' })
export class TicketPriority extends Entity {
  @Column({ type: DataType.STRING(255), allowNull: false }) declare name: string;
  @Column({ type: DataType.STRING(16), allowNull: false, defaultValue: '#ffffff' }) declare colour: string;
  @Column({ type: DataType.INTEGER, allowNull: false, defaultValue: 0 }) declare order: number;
}
