import { Column, DataType, Table } from 'sequelize-typescript';
import { Entity, flag } from '../entity';

/** A ticket status; `auto_close`: inactive tickets in it are closed automatically. */
@Table({ tableName: 'ticket_statuses' })
export class TicketStatus extends Entity {
  @Column({ type: DataType.STRING(255), allowNull: false }) declare name: string;
  @Column({ type: DataType.STRING(16), allowNull: false, defaultValue: '#ffffff' }) declare colour: string;
  @Column(flag(0)) declare auto_close: number;
  @Column({ type: DataType.INTEGER, allowNull: false, defaultValue: 0 }) declare order: number;
}
