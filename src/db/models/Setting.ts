import { Column, DataType, Table } from 'sequelize-typescript';
import { Entity } from '../entity';

/** One value of a settings object; `scope` names the object (core, user, ticket, ...). */
@Table({ tableName: 'settings' })
export class Setting extends Entity {
  @Column({ type: DataType.STRING(32), allowNull: false }) declare scope: string;
  @Column({ type: DataType.STRING(64), allowNull: false }) declare name: string;
  @Column({ type: DataType.TEXT, allowNull: false }) declare value: string;
}
