import { Column, DataType, Table } from 'sequelize-typescript';
import { Entity } from '../entity';

/** A ticket tag; names are unique (case-insensitive). */
@Table({ tableName: 'ticket_tags' })
export class TicketTag extends Entity {
  @Column({ type: DataType.STRING(255), allowNull: false }) declare name: string;
  @Column({ type: DataType.STRING(16), allowNull: false, defaultValue: '#dddddd' }) declare colour: string;
}
