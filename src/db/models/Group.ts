import { Column, DataType, Table } from 'sequelize-typescript';
import { Entity, flag } from '../entity';

/** A group of operators (type 'operator') or of users (type 'user'). */
@Table({ tableName: 'groups' })
export class Group extends Entity {
  @Column({ type: DataType.STRING(8), allowNull: false }) declare type: 'operator' | 'user';
  @Column({ type: DataType.STRING(255), allowNull: false }) declare name: string;
  @Column(DataType.TEXT) declare description: string | null;
  @Column(DataType.STRING(16)) declare colour: string | null;
  @Column(flag(0)) declare administrator: number;
}
