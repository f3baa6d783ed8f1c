import { Column, DataType, Table } from 'sequelize-typescript';
import { Entity } from '../entity';

@Table({ tableName: 'roles' })
export class Role extends Entity {
  @Column({ type: DataType.STRING(255), allowNull: false }) declare name: string;
  @Column({ type: DataType.STRING(255), allowNull: false }) declare slug: string;
  @Column(DataType.TEXT) declare description: string | null;
}
