import { Column, DataType, Table } from 'sequelize-typescript';
import { Entity } from '../entity';

@Table({ tableName: 'selfservice_tags' })
export class SelfServiceTag extends Entity {
  @Column({ type: DataType.STRING(255), allowNull: false }) declare name: string;
  @Column({ type: DataType.STRING(255), allowNull: false }) declare slug: string;
}
