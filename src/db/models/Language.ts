import { Column, DataType, Table } from 'sequelize-typescript';
import { Entity, flag } from '../entity';

@Table({ tableName: 'languages' })
export class Language extends Entity {
  @Column({ type: DataType.STRING(100), allowNull: false }) declare name: string;
  @Column({ type: DataType.STRING(10), allowNull: false, unique: true }) declare code: string;
  @Column(flag(1)) declare enabled: number;
}
